import type { RateLimitDecision } from './billing-api.js';

/**
 * The `X-RateLimit-*` headers of a rate-limit decision (decisions §3: on every response of an
 * authenticated request), `Reset` in unix milliseconds as the spec says, plus `Retry-After`
 * (whole seconds) when the request was refused for it. Billing sends them on its refusals and
 * edge on its responses; each sets them on its own response. `Limit`/`Remaining` are the tightest
 * requests-per-minute limit (the account's, the key's or the scoped token's); the `-Tokens`
 * headers the tightest tokens-per-minute limit, when one applies.
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.resetMs),
  };
  if (decision.tokens) {
    headers['X-RateLimit-Limit-Tokens'] = String(decision.tokens.limit);
    headers['X-RateLimit-Remaining-Tokens'] = String(decision.tokens.remaining);
    headers['X-RateLimit-Reset-Tokens'] = String(decision.tokens.resetMs);
  }
  if (!decision.allowed) headers['Retry-After'] = String(decision.retryAfterS);
  return headers;
}
