import type { ErrorRequestHandler, RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';
import type { BillingClient } from '../clients/billing-client.js';
import type { RateLimit } from '../clients/billing-types.js';
import { stateOf } from './context.js';
import { applyRateLimit } from './rate-limit-headers.js';

/**
 * Runs before the runtime's one error handler (which maps every error to its status and body):
 * makes sure a refused authenticated request still counted against the rate limit and carries
 * the `X-RateLimit-*` headers. A request refused before it was counted (a 400, a 404 route, an
 * idempotency conflict) is counted here; if that finds the account over its limit, the 429 wins,
 * as it would have on any route that counts first.
 */
export function rateLimitOnErrors(billing: BillingClient): ErrorRequestHandler {
  return async (error, _req, res, next) => {
    const state = stateOf(res);
    const decided = rateLimitIn(error);
    if (decided) applyRateLimit(res, decided);
    if (state.rateLimit || !state.principal || res.headersSent) {
      next(error);
      return;
    }
    try {
      applyRateLimit(res, await billing.rateLimit(state.principal));
      next(error);
    } catch (refusal) {
      const limited = rateLimitIn(refusal);
      if (limited) applyRateLimit(res, limited);
      // Billing unreachable while counting: the original refusal stands.
      next(limited ? refusal : error);
    }
  };
}

function rateLimitIn(error: unknown): RateLimit | undefined {
  if (!(error instanceof GatewayError)) return undefined;
  return error.details?.rateLimit as RateLimit | undefined;
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
