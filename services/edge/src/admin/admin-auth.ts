import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';

// Comparing digests keeps the comparison constant-time whatever the lengths.
const digest = (value: string) => createHash('sha256').update(value).digest();

/** The operator API: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function requireAdminToken(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('Authorization') ?? '');
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)) {
      next();
      return;
    }
    next(new GatewayError('unauthorized', 'A valid operator (admin) token is required'));
  };
}
