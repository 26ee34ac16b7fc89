import type { Response } from 'express';

/* Server-sent events as model servers send them: `data: <json>\n\n`, no event names. */

export function openSse(res: Response): void {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.flushHeaders();
}

/** Writes one event; a closed connection is ignored (generation stops on its own). */
export function writeEvent(res: Response, data: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  // Generation is capped in tokens, so what the socket buffers for a slow reader is bounded.
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** OpenAI-compatible streams end with `data: [DONE]`; TGI streams simply end. */
export function endSse(res: Response, done: boolean): void {
  if (res.writableEnded || res.destroyed) return;
  res.end(done ? 'data: [DONE]\n\n' : undefined);
}

export function nowS(): number {
  return Math.floor(Date.now() / 1000);
}
