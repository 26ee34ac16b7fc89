/**
 * A refusal or failure as an answer of a batch item (status, headers, error body): what the one
 * error handler would have sent for it, with the rate-limit decision as `X-RateLimit-*` headers
 * and `Retry-After`. Billing answers its batch routes' items with it; edge answers the API keys
 * it admits itself the same way (ADR 0070), so the client reads either exactly alike.
 */
import {
  rateLimitHeaders,
  toErrorBody,
  type BatchItemAnswer,
  type RateLimitDecision,
} from '@gateway/contracts';
import { asGatewayError } from './errors.js';

export function errorAnswerOf(error: unknown): BatchItemAnswer {
  const gatewayError = asGatewayError(error);
  const headers: Record<string, string> = {};
  const decision = rateLimitDecisionOf(gatewayError.details);
  if (decision) {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) {
      headers[name.toLowerCase()] = value;
    }
  }
  const retryAfterS = gatewayError.details?.retryAfterS;
  if (typeof retryAfterS === 'number') headers['retry-after'] = String(retryAfterS);
  return { status: gatewayError.status, headers, body: toErrorBody(gatewayError) };
}

/**
 * The decision an error carries: `details.rateLimit` (a refusal after the count), or `details`
 * itself (a 429: `limit`, `remaining`, `resetMs`).
 */
export function rateLimitDecisionOf(
  details: Record<string, unknown> | undefined,
): RateLimitDecision | undefined {
  const source = (details?.rateLimit ?? details) as Partial<RateLimitDecision> | undefined;
  if (
    typeof source?.limit !== 'number' ||
    typeof source.remaining !== 'number' ||
    typeof source.resetMs !== 'number'
  ) {
    return undefined;
  }
  return {
    allowed: source.allowed ?? false,
    limit: source.limit,
    remaining: source.remaining,
    resetMs: source.resetMs,
    retryAfterS: source.retryAfterS ?? 1,
    ...(source.tokens ? { tokens: source.tokens } : {}),
  };
}
