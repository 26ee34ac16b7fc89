/** Only the named string parameters of a query travel on to billing or the dispatcher. */
export function pickQuery(query: Record<string, unknown>, names: readonly string[]): string {
  const params = new URLSearchParams();
  for (const name of names) {
    const value = query[name];
    if (typeof value === 'string') params.set(name, value);
  }
  return params.toString();
}

export const PAGE_PARAMS = ['limit', 'cursor'] as const;
