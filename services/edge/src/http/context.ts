/*
 * The request's HTTP context at edge: its bounded JSON body, what billing's answers left on it
 * (caller, rate-limit headers) and its logger.
 */
import type { Request, RequestHandler, Response } from 'express';
import { GatewayError, rateLimitHeaders } from '@gateway/contracts';
import type { Caller, RateLimitDecision } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import { jsonBodyParser } from '@gateway/runtime';

/** What edge learns about a request as it goes, kept on `res.locals`. */
export interface RequestState {
  /** Who is calling, once billing said (authentication or admission). */
  caller?: Caller;
  /** Set once the request was counted against the account's rate limit. */
  rateLimit?: RateLimitDecision;
  /** Billing refused the credential: nothing more to ask it about this request. */
  authFailed?: boolean;
  /** Refused by the failed-authentication limit of its address: billing is not asked at all. */
  addressLimited?: boolean;
  /** A route that never counts (`GET /v1/key`): not even its refusal asks billing to count. */
  uncounted?: boolean;
}

export function stateOf(res: Response): RequestState {
  const locals = res.locals as { edge?: RequestState };
  locals.edge ??= {};
  return locals.edge;
}

/** The authenticated caller (after `authenticate`, an admission or `identify`). */
export function callerOf(res: Response): Caller {
  const caller = stateOf(res).caller;
  if (!caller) throw new GatewayError('internal_error', 'Internal error');
  return caller;
}

/** The request's logger (pino-http's child, whose lines carry the request id). */
export function logOf(req: Request): Logger {
  const log = (req as { log?: Logger }).log;
  if (!log) throw new Error('request logger missing: pino-http must run first');
  return log;
}

/**
 * Records that the request was counted and sets its `X-RateLimit-*` headers (`rateLimitHeaders`:
 * on every response of an authenticated request, `Retry-After` when it was refused for it) while
 * they can still be sent.
 */
export function applyRateLimit(res: Response, rateLimit: RateLimitDecision): void {
  stateOf(res).rateLimit = rateLimit;
  if (!res.headersSent) res.set(rateLimitHeaders(rateLimit));
}

const JSON_TYPES = ['application/json', 'application/*+json'];

/** Whether the request carries a body at all (what body-parser's `type-is` checks too). */
export function hasBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }) {
  return (
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  );
}

/**
 * JSON bodies up to `limitBytes`. A body of another media type is 415; malformed JSON, bad
 * UTF-8, a bad Content-Encoding or excessive nesting is 400 and an oversized one 413 (the
 * runtime's parser and error mapping). No body at all leaves `req.body` undefined, which
 * validation refuses as "not a JSON object".
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (hasBody(req.headers) && !req.is(JSON_TYPES)) {
      next(new GatewayError('unsupported_media_type', 'Request body must be application/json'));
      return;
    }
    next();
  };
  return [requireJson, ...jsonBodyParser({ limitBytes, type: JSON_TYPES })];
}
