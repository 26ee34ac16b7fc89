import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { GatewayError } from '@gateway/contracts';

/**
 * Service-to-service credentials. Each calling service has its own token, so a service answers
 * only what that caller needs (least privilege): a compromised inference worker holding its
 * token cannot reach billing's operator functions. Tokens are compared as SHA-256 digests, in
 * constant time whatever their lengths.
 */

export const INTERNAL_TOKEN_HEADER = 'x-internal-token';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Which caller presented the request's credential (set by `identifyInternalCaller`). */
export function internalCallerOf(res: Response): string {
  return (res.locals as { internalCaller: string }).internalCaller;
}

/**
 * 401 unless the request carries one of the callers' tokens; remembers which caller it was.
 * Every known token is compared, so the time taken does not tell which one nearly matched.
 */
export function identifyInternalCaller(tokensByCaller: Record<string, string>): RequestHandler {
  const expected = Object.entries(tokensByCaller).map(([caller, token]) => ({
    caller,
    digest: digest(token),
  }));
  return (req, res, next) => {
    const presented = req.headers[INTERNAL_TOKEN_HEADER];
    const presentedDigest = digest(typeof presented === 'string' ? presented : '');
    let caller: string | undefined;
    for (const entry of expected) {
      if (timingSafeEqual(presentedDigest, entry.digest) && typeof presented === 'string') {
        caller = entry.caller;
      }
    }
    if (caller === undefined) {
      next(new GatewayError('unauthorized', 'A valid internal service credential is required'));
      return;
    }
    (res.locals as { internalCaller: string }).internalCaller = caller;
    next();
  };
}

/** 403 for a caller outside `callers` (after `identifyInternalCaller`). */
export function allowInternalCallers(...callers: string[]): RequestHandler {
  return (_req, res, next) => {
    if (callers.includes(internalCallerOf(res))) {
      next();
      return;
    }
    next(new GatewayError('forbidden', 'This service credential may not call this operation'));
  };
}
