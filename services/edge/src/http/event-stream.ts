import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { Response } from 'express';

/*
 * Server-sent events for streamed answers (chat chunks, Responses events). Headers go out with
 * the first event, so anything refused before it is an ordinary JSON error with its status.
 */

export function openEventStream(res: Response): void {
  res.status(200);
  res.set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    // Proxies such as nginx must pass each event on at once.
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
}

/**
 * How long a stream waits for its client to take what is buffered. A client that reads nothing
 * for this long (stopped, or gone without a FIN) is cut: otherwise edge would keep its
 * connection, and every reply of its job, for as long as the socket stays open, which Node does
 * not bound. A slow client that still reads is not cut: `drain` comes once the socket took what
 * edge held (about 16 KiB), so reading a few hundred bytes a second is enough.
 */
export const STALLED_READER_MS = 30_000;

/**
 * Writes one frame; when the socket's buffer is full, waits for it to drain, or for the close;
 * a client that takes nothing for `stalledAfterMs` gets its connection destroyed, which ends
 * the request as a client that left (its job cancelled, its hold settled or voided).
 */
export async function writeFrame(
  res: Response,
  frame: string,
  stalledAfterMs = STALLED_READER_MS,
): Promise<void> {
  if (res.writableEnded || res.destroyed) return;
  if (res.write(frame)) return;
  // One signal removes every listener and the timer once the first of them fires: a long
  // stream that waits often would otherwise pile up 'close' listeners on the response.
  const done = new AbortController();
  const { signal } = done;
  try {
    const stalled = delay(stalledAfterMs, 'stalled', { signal });
    const outcome = await Promise.race([
      once(res, 'drain', { signal }).then(() => 'drained'),
      once(res, 'close', { signal }).then(() => 'closed'),
      stalled,
    ]);
    if (outcome === 'stalled') res.destroy();
  } finally {
    done.abort();
  }
}
