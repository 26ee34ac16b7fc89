/**
 * Polls `probe` every 20 ms until it gives a value (anything but `undefined` or `false`) and
 * resolves with it; throws `timed out waiting for <what>` after `timeoutMs`. What tests wait on
 * when the thing they expect happens in another process or in the background (a settlement, a
 * delivery, a page's state).
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
