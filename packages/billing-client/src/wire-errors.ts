import { GatewayError, gatewayErrorFromWire } from '@gateway/contracts';
import type { GatewayErrorDetails, RateLimitDecision } from '@gateway/contracts';
import { headerOf, type InternalResponse } from '@gateway/runtime';

/**
 * Rebuilds the GatewayError billing answered with, keeping what travels beside the body: the
 * rate-limit decision (`X-RateLimit-*`) as `details.rateLimit` and `Retry-After` as
 * `details.retryAfterS`, so edge repeats both to its client.
 */
export function errorFromAnswer(service: string, response: InternalResponse): GatewayError {
  const wire = parseErrorBody(response.body);
  if (!wire) {
    return new GatewayError('internal_error', 'Internal error', {
      details: { dependency: service, status: response.status },
    });
  }
  if (wire.code === 'unauthorized' || wire.code === 'forbidden') return credentialRefused(service);
  const base = gatewayErrorFromWire(wire);
  const details: GatewayErrorDetails = {};
  const rateLimit = rateLimitFromHeaders(response);
  if (rateLimit) details.rateLimit = rateLimit;
  const retryAfterS = Number(headerOf(response, 'retry-after'));
  if (Number.isInteger(retryAfterS) && retryAfterS > 0) details.retryAfterS = retryAfterS;
  return new GatewayError(base.code, base.message, {
    ...(base.param === undefined ? {} : { param: base.param }),
    details,
  });
}

/**
 * A service refusing the caller's own internal credential: a deployment fault (a token that
 * differs between two services), not the client's, so 500 `internal_error` naming the
 * dependency, never the 401 the client would read as its own key refused. The one mapping for
 * every internal call (edge's proxies use it too).
 */
export function credentialRefused(service: string): GatewayError {
  return new GatewayError('internal_error', `Gateway configuration error (${service} credential)`, {
    details: { dependency: service },
  });
}

function parseErrorBody(body: Buffer): { code: string; message: string; param?: string } | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: Record<string, unknown> };
    const { code, message, param } = parsed.error ?? {};
    if (typeof code !== 'string' || typeof message !== 'string') return null;
    return typeof param === 'string' ? { code, message, param } : { code, message };
  } catch {
    return null;
  }
}

/** The decision billing attached to a refusal as `X-RateLimit-*` (and `Retry-After`) headers. */
export function rateLimitFromHeaders(response: InternalResponse): RateLimitDecision | undefined {
  const number = (name: string) => Number(headerOf(response, name) ?? NaN);
  const limit = number('x-ratelimit-limit');
  const remaining = number('x-ratelimit-remaining');
  const resetMs = number('x-ratelimit-reset');
  if (![limit, remaining, resetMs].every(Number.isFinite)) return undefined;
  const retryAfter = number('retry-after');
  const tokens = {
    limit: number('x-ratelimit-limit-tokens'),
    remaining: number('x-ratelimit-remaining-tokens'),
    resetMs: number('x-ratelimit-reset-tokens'),
  };
  return {
    limit,
    remaining,
    resetMs,
    allowed: !Number.isFinite(retryAfter),
    retryAfterS: Number.isFinite(retryAfter) ? retryAfter : 1,
    ...(Object.values(tokens).every(Number.isFinite) ? { tokens } : {}),
  };
}
