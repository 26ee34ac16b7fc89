import type { Response } from 'express';
import { rateLimitHeaders, type RateLimitDecision } from '@gateway/contracts';
import { stateOf } from './context.js';

/**
 * Records that the request was counted and sets its `X-RateLimit-*` headers (`rateLimitHeaders`:
 * on every response of an authenticated request, `Retry-After` when it was refused for it) while
 * they can still be sent.
 */
export function applyRateLimit(res: Response, rateLimit: RateLimitDecision): void {
  stateOf(res).rateLimit = rateLimit;
  if (!res.headersSent) res.set(rateLimitHeaders(rateLimit));
}
