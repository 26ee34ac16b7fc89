import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';
import type { AuthFailureLimiter } from '../http/auth.js';

// Comparing digests keeps the comparison constant-time whatever the lengths.
const digest = (value: string) => createHash('sha256').update(value).digest();

/** The operator API: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function requireAdminToken(
  adminToken: string,
  failures: AuthFailureLimiter,
): RequestHandler {
  const expected = digest(adminToken);
  return async (req, _res, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('Authorization') ?? '');
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)) {
      failures.accepted(req);
      next();
      return;
    }
    const refusal = new GatewayError('unauthorized', 'A valid operator (admin) token is required');
    await failures.countFailure(req, refusal);
    next(refusal);
  };
}
