import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';

export const INTERNAL_TOKEN_HEADER = 'x-internal-token';

// Comparing digests keeps the comparison constant-time even when lengths differ.
const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Billing's API is internal: every call must carry the service credential shared with edge
 * and the worker. Nothing else (not a caller-supplied account id) is trusted without it.
 */
export function requireInternalToken(expectedToken: string): RequestHandler {
  const expected = digest(expectedToken);
  return (req, _res, next) => {
    const presented = req.headers[INTERNAL_TOKEN_HEADER];
    if (typeof presented === 'string' && timingSafeEqual(digest(presented), expected)) {
      next();
      return;
    }
    next(new GatewayError('unauthorized', 'A valid internal service credential is required'));
  };
}
