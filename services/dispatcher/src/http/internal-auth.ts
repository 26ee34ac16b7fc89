import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';

export const INTERNAL_TOKEN_HEADER = 'x-internal-token';

// Comparing SHA-256 digests keeps the comparison constant-time whatever the lengths.
const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Only edge calls this API; it proves itself with the shared service credential. */
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
