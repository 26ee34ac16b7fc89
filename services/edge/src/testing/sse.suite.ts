/** Reads a server-sent event stream into its `data:` payloads (tests only). */
export async function readEvents(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      if (!block.startsWith('data: ')) throw new Error(`not a data event: ${block}`);
      return block.slice('data: '.length);
    });
}
