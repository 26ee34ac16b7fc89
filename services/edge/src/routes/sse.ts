import { once } from 'node:events';
import type { Response } from 'express';
import { toErrorBody } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import { asGatewayError } from '@gateway/runtime';
import type { JobReply, RunningJob } from '../jobs/running-job.js';

/**
 * Server-sent events of a chat stream, data-only in the OpenAI chunk shape: one
 * `data: <json>\n\n` per chunk, the final usage chunk, then `data: [DONE]\n\n`. Headers go out
 * only with the first reply, so anything refused before it is an ordinary JSON error with its
 * status. An error after that is one `data: {"error": {...}}` event, then `[DONE]` (decisions §3).
 */
export async function relayStream(
  res: Response,
  job: RunningJob,
  first: JobReply,
  log: Logger,
): Promise<void> {
  openEventStream(res);
  let reply = first;
  try {
    for (;;) {
      await writeEvent(res, JSON.stringify(reply.data ?? {}));
      if (reply.type === 'final') break;
      reply = await job.next();
    }
  } catch (error) {
    if (job.cancelledByClient) return;
    const gatewayError = asGatewayError(error);
    log.warn({ jobId: job.jobId, code: gatewayError.code }, 'stream failed after it started');
    await writeEvent(res, JSON.stringify(toErrorBody(gatewayError)));
  }
  await writeEvent(res, '[DONE]');
  res.end();
}

function openEventStream(res: Response): void {
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

/** Writes one event; waits for the socket to drain (or close) when its buffer is full. */
async function writeEvent(res: Response, data: string): Promise<void> {
  if (res.writableEnded || res.destroyed) return;
  if (res.write(`data: ${data}\n\n`)) return;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
}
