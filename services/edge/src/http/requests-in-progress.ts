import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';
import { stateOf } from './context.js';

/** The defaults of `PUBLIC_REQUESTS_MAX` and `PUBLIC_BODY_BYTES_MAX` (config.ts says why). */
export const DEFAULT_REQUESTS_MAX = 1_024;
export const DEFAULT_BODY_BYTES_MAX = 32 * 1024 * 1024;

export interface InProgressLimits {
  /** `PUBLIC_REQUESTS_MAX`: public API requests this process serves at once. */
  requestsMax: number;
  /** `PUBLIC_BODY_BYTES_MAX`: the request bodies of those, by their declared length, together. */
  bodyBytesMax: number;
  /**
   * A body counts as its `Content-Length`, at most this (the largest body a route takes; a
   * longer one is refused with 413 by its parser). A chunked body declares no length and counts
   * as nothing here: only the count bounds it (see below).
   */
  largestBodyBytes: number;
}

/** The middleware, and what it has let in (for the gauge and the tests). */
export interface RequestsInProgress {
  readonly handler: RequestHandler;
  readonly requests: () => number;
  readonly bodyBytes: () => number;
}

/**
 * The body's share of the budget: its declared length. A chunked body's size is known only once
 * read, and counting it as the largest allowed refused ordinary concurrency (100 small chunked
 * requests at once on a replica: 16 fit in the budget), so it counts as nothing and the count
 * bounds it. The SDKs declare their bodies' lengths.
 */
function declaredBodyBytes(req: IncomingMessage, largestBodyBytes: number): number {
  // Node's parser has already refused a Content-Length that is not one decimal number (400).
  return Math.min(Number(req.headers['content-length'] ?? 0), largestBodyBytes);
}

/**
 * Bounds what one edge process holds for the public API at once. Every request in progress
 * keeps its body, the parsed request and its job's state until its answer ends (a stream for
 * minutes), so without a bound a burst grows the heap until the pod is killed, taking every
 * other request in it along. Past either limit the request is refused before its body is read
 * and before any hold: 503 `service_unavailable` with `Retry-After: 1`, which the SDKs retry
 * (docs/security.md, "Limits"). A request counts from its arrival until its answer closes,
 * finished or cut.
 */
export function requestsInProgress(limits: InProgressLimits): RequestsInProgress {
  let requests = 0;
  let bodyBytes = 0;
  const handler: RequestHandler = (req, res, next) => {
    const bytes = declaredBodyBytes(req, limits.largestBodyBytes);
    if (requests >= limits.requestsMax || bodyBytes + bytes > limits.bodyBytesMax) {
      // Refused for the gateway's load, not the caller's: billing is not asked to count it.
      stateOf(res).uncounted = true;
      next(
        new GatewayError(
          'service_unavailable',
          'This gateway replica is serving as many requests as it takes; retry',
          { details: { retryAfterS: 1 } },
        ),
      );
      return;
    }
    requests += 1;
    bodyBytes += bytes;
    res.once('close', () => {
      requests -= 1;
      bodyBytes -= bytes;
    });
    next();
  };
  return { handler, requests: () => requests, bodyBytes: () => bodyBytes };
}
