import { once } from 'node:events';
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

/** Writes one frame; waits for the socket to drain (or close) when its buffer is full. */
export async function writeFrame(res: Response, frame: string): Promise<void> {
  if (res.writableEnded || res.destroyed) return;
  if (res.write(frame)) return;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
}
