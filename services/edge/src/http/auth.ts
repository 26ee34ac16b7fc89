import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';
import type { BillingClient } from '../clients/billing-client.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import { principalOf, stateOf } from './context.js';
import { applyRateLimit } from './rate-limit-headers.js';

/**
 * Authentication through billing, first on every `/v1` route: before the body is read, so a
 * missing or bad credential is 401 even when the body is malformed or too large. A failure counts
 * against the client's address (`failures`), whose guard runs before this.
 */
export function authenticate(billing: BillingClient, failures: AuthFailureLimiter): RequestHandler {
  return async (req, res, next) => {
    try {
      stateOf(res).principal = await billing.authenticate(req.get('Authorization'));
      next();
    } catch (error) {
      await failures.countFailure(req, error);
      next(error);
    }
  };
}

/**
 * Counts a request that places no hold against the account's rate limit (inference routes are
 * counted by billing's `admit`), before the route does anything: a 429 stops it.
 */
export function countRequest(billing: BillingClient): RequestHandler {
  return async (_req, res, next) => {
    try {
      applyRateLimit(res, await billing.rateLimit(principalOf(res)));
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** Scoped-token management is for the API key's holder, not for a third party's token. */
export const requireApiKey: RequestHandler = (_req, res, next) => {
  if (principalOf(res).kind === 'api_key') {
    next();
    return;
  }
  next(
    new GatewayError('invalid_api_key', 'This operation requires an API key, not a scoped token'),
  );
};
