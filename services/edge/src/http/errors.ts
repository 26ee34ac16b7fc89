import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { BillingClient } from '@gateway/billing-client';
import { GatewayError, type RateLimitDecision } from '@gateway/contracts';
import { noteAuthentication, type AuthFailureLimiter } from './auth.js';
import { applyRateLimit, stateOf } from './context.js';

/**
 * Runs before the runtime's one error handler (which maps every error to its status and body):
 * makes sure a refused request with a credential still counted against the account's rate limit
 * and carries the `X-RateLimit-*` headers. An inference request refused before its admission (a
 * 400, an idempotency conflict) is authenticated and counted here; an authentication failure
 * then wins, as it would have had billing been asked first, and a 429 wins over the refusal, as
 * on any route that counts first.
 */
export function rateLimitOnErrors(
  billing: BillingClient,
  failures: AuthFailureLimiter,
): ErrorRequestHandler {
  return async (error, req, res, next) => {
    const state = stateOf(res);
    const decided = rateLimitIn(error);
    if (decided) applyRateLimit(res, decided);
    const authorization = req.get('Authorization');
    if (
      state.rateLimit ||
      state.authFailed ||
      state.addressLimited ||
      state.uncounted ||
      res.headersSent ||
      authorization === undefined
    ) {
      next(error);
      return;
    }
    try {
      const { caller, rateLimit } = await billing.authenticate(authorization);
      failures.accepted(req);
      state.caller = caller;
      applyRateLimit(res, rateLimit);
      next(error);
    } catch (refusal) {
      await noteAuthentication(req, res, failures, refusal);
      const limited = rateLimitIn(refusal);
      if (limited) applyRateLimit(res, limited);
      const decisive = state.authFailed || limited !== undefined;
      // Billing unreachable while counting: the original refusal stands.
      next(decisive ? refusal : error);
    }
  };
}

function rateLimitIn(error: unknown): RateLimitDecision | undefined {
  if (!(error instanceof GatewayError)) return undefined;
  return error.details?.rateLimit as RateLimitDecision | undefined;
}

/** For a known path asked with another method: 405 with `Allow`. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, res, next) => {
    res.set('Allow', allowed.join(', '));
    next(
      new GatewayError(
        'method_not_allowed',
        `${req.method} is not allowed on ${req.baseUrl}${req.path}`,
      ),
    );
  };
}
