import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { GatewayError } from '@gateway/contracts';
import { answerBeforeBodyAndClose } from '@gateway/runtime';
import { stateOf } from './context.js';

/** The defaults of `PUBLIC_REQUESTS_MAX` and `PUBLIC_BODY_BYTES_MAX` (config.ts says why). */
export const DEFAULT_REQUESTS_MAX = 1_024;
export const DEFAULT_BODY_BYTES_MAX = 32 * 1024 * 1024;

export interface InProgressLimits {
  /** `PUBLIC_REQUESTS_MAX`: public API requests this process serves at once. */
  requestsMax: number;
  /**
   * `PUBLIC_BODY_BYTES_MAX`: the request bodies of those together, by their declared length (a
   * chunked body: by the bytes read so far).
   */
  bodyBytesMax: number;
  /**
   * A body counts as its `Content-Length`, at most this (the largest body a route takes; a
   * longer one is refused with 413 by its parser). A chunked body declares no length: it counts
   * by the bytes read so far (see `meterChunkedBody`).
   */
  largestBodyBytes: number;
}

/** The middleware, and what it has let in (for the gauge and the tests). */
export interface RequestsInProgress {
  readonly handler: RequestHandler;
  readonly requests: () => number;
  readonly bodyBytes: () => number;
}

/** The body's share of the budget when it arrives: its declared length (0 when chunked). */
function declaredBodyBytes(req: IncomingMessage, largestBodyBytes: number): number {
  // Node's parser has already refused a Content-Length that is not one decimal number (400).
  return Math.min(Number(req.headers['content-length'] ?? 0), largestBodyBytes);
}

const refusal = () =>
  new GatewayError(
    'service_unavailable',
    'This gateway replica is serving as many requests as it takes; retry',
    { details: { retryAfterS: 1 } },
  );

/**
 * A chunked body's size is known only as it is read. Counting it as the largest body allowed
 * refused ordinary concurrency (100 small chunked requests at once on a replica: 16 fit in the
 * budget), and counting it as nothing let 1,024 unauthenticated 2 MiB bodies fill 2 GiB. So its
 * bytes are taken from the budget as the HTTP parser hands them over (`push` is where every body
 * byte passes, whoever reads it). From the chunk that would overfill the budget on, nothing of
 * the body is kept: the rest is read and dropped (a socket left unread would be reset on close,
 * and the client could lose the answer), and the request is answered 503 with
 * `Connection: close`, as a stalled body is answered 408. `take` says whether the bytes fit,
 * and counts them if so.
 */
function meterChunkedBody(
  req: IncomingMessage,
  res: Response,
  take: (bytes: number) => boolean,
): void {
  const push = req.push.bind(req);
  let cut = false;
  req.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (cut) return true;
    if (Buffer.isBuffer(chunk) && !take(chunk.length)) {
      cut = true;
      stateOf(res).uncounted = true;
      // Not from inside the parser's callback: the answer is written on the next turn.
      setImmediate(() => answerCut(req, res));
      return true;
    }
    return push(chunk, encoding);
  };
}

/** Node closes the connection once this answer is written (`Connection: close`). */
function answerCut(req: IncomingMessage, res: Response): void {
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  answerBeforeBodyAndClose(res, refusal());
}

/**
 * Bounds what one edge process holds for the public API at once. Every request in progress
 * keeps its body, the parsed request and its job's state until its answer ends (a stream for
 * minutes), so without a bound a burst grows the heap until the pod is killed, taking every
 * other request in it along. Past either limit the request is refused before its body is read
 * and before any hold: 503 `service_unavailable` with `Retry-After: 1`, which the SDKs retry
 * (docs/security.md, "Limits"); a chunked body is refused so while it is read, before any hold
 * too. A request counts from its arrival until its answer closes, finished or cut.
 */
export function requestsInProgress(limits: InProgressLimits): RequestsInProgress {
  let requests = 0;
  let bodyBytes = 0;
  const handler: RequestHandler = (req, res, next) => {
    let bytes = declaredBodyBytes(req, limits.largestBodyBytes);
    if (requests >= limits.requestsMax || bodyBytes + bytes > limits.bodyBytesMax) {
      // Refused for the gateway's load, not the caller's: billing is not asked to count it.
      stateOf(res).uncounted = true;
      next(refusal());
      return;
    }
    requests += 1;
    bodyBytes += bytes;
    if (bytes === 0 && req.headers['transfer-encoding'] !== undefined) {
      meterChunkedBody(req, res, (more) => {
        if (bodyBytes + more > limits.bodyBytesMax) return false;
        bodyBytes += more;
        bytes += more;
        return true;
      });
    }
    res.once('close', () => {
      requests -= 1;
      bodyBytes -= bytes;
    });
    next();
  };
  return { handler, requests: () => requests, bodyBytes: () => bodyBytes };
}
