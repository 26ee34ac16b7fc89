import { GatewayError, gatewayErrorFromWire } from '@gateway/contracts';
import type { GatewayErrorDetails } from '@gateway/contracts';
import type { InternalResponse } from './internal-http.js';
import type { RateLimit } from './billing-types.js';

/**
 * Rebuilds the GatewayError an internal service answered with, keeping what travels beside the
 * body: the rate-limit decision (`X-RateLimit-*`) as `details.rateLimit` and `Retry-After` as
 * `details.retryAfterS`, so edge repeats both to its client.
 */
export function errorFromAnswer(service: string, response: InternalResponse): GatewayError {
  const wire = parseErrorBody(response.body);
  if (!wire) {
    return new GatewayError('internal_error', 'Internal error', {
      details: { dependency: service, status: response.status },
    });
  }
  // Billing refusing edge's own credential is a deployment fault, not the client's.
  if (wire.code === 'unauthorized') {
    return new GatewayError('GATEWAY_TIMEOUT', 'Gateway configuration error', {
      details: { dependency: service },
    });
  }
  const base = gatewayErrorFromWire(wire);
  const details: GatewayErrorDetails = {};
  const rateLimit = rateLimitFromHeaders(response.headers);
  if (rateLimit) details.rateLimit = rateLimit;
  const retryAfterS = Number(response.headers.get('retry-after'));
  if (Number.isInteger(retryAfterS) && retryAfterS > 0) details.retryAfterS = retryAfterS;
  return new GatewayError(base.code, base.message, {
    ...(base.param === undefined ? {} : { param: base.param }),
    details,
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

export function rateLimitFromHeaders(headers: Headers): RateLimit | undefined {
  const limit = Number(headers.get('x-ratelimit-limit') ?? NaN);
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? NaN);
  const resetMs = Number(headers.get('x-ratelimit-reset') ?? NaN);
  if (![limit, remaining, resetMs].every(Number.isFinite)) return undefined;
  const retryAfter = Number(headers.get('retry-after') ?? NaN);
  return {
    limit,
    remaining,
    resetMs,
    allowed: !Number.isFinite(retryAfter),
    retryAfterS: Number.isFinite(retryAfter) ? retryAfter : 1,
  };
}
