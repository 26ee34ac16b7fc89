import type { Response } from 'express';
import type { RateLimitDecision as RateLimit } from '@gateway/contracts';
import { stateOf } from './context.js';

/**
 * `X-RateLimit-*` on every response of an authenticated request (decisions §3), `Reset` in unix
 * milliseconds as the spec says; `Retry-After` (seconds) when the request was refused for it.
 */
export function rateLimitHeaders(rateLimit: RateLimit): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(rateLimit.limit),
    'X-RateLimit-Remaining': String(rateLimit.remaining),
    'X-RateLimit-Reset': String(rateLimit.resetMs),
  };
  if (!rateLimit.allowed) headers['Retry-After'] = String(rateLimit.retryAfterS);
  return headers;
}

/** Records that the request was counted and sets the headers while they can still be sent. */
export function applyRateLimit(res: Response, rateLimit: RateLimit): void {
  stateOf(res).rateLimit = rateLimit;
  if (!res.headersSent) res.set(rateLimitHeaders(rateLimit));
}
