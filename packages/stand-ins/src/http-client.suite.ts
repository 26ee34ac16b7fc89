/* Test helpers: plain fetch against a stand-in, and a reader for its server-sent events. */

/** Decoded JSON in tests: its shape is what the assertions check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the raw text is what the test looks at.
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** The `data:` payloads of an event stream, in order, `[DONE]` kept as a string. */
export async function readEvents(response: Response): Promise<Json[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data:'))
    .map((block) => {
      const data = block.slice('data:'.length).trim();
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

export async function postStream(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; events: unknown[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, events: await readEvents(response) };
}

export async function waitFor(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
