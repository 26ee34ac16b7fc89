import { describe, expect, it } from '@jest/globals';
import { errorFromAnswer } from './wire-errors.js';

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

describe('errorFromAnswer', () => {
  it('keeps the code, param and the rate-limit headers as details', () => {
    const error = errorFromAnswer(
      'billing',
      answer(
        429,
        {
          error: {
            message: 'Account rate limit reached',
            type: 'service_error',
            code: 'rate_limit_exceeded',
          },
        },
        {
          'X-RateLimit-Limit': '5',
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': '1700000060000',
          'Retry-After': '12',
        },
      ),
    );
    expect(error).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    expect(error.details).toEqual({
      retryAfterS: 12,
      rateLimit: {
        limit: 5,
        remaining: 0,
        resetMs: 1700000060000,
        allowed: false,
        retryAfterS: 12,
      },
    });
  });

  it("turns billing refusing the caller's credential into a gateway fault, not a client 401", () => {
    for (const [status, code] of [
      [401, 'unauthorized'],
      [403, 'forbidden'],
    ] as const) {
      const error = errorFromAnswer(
        'billing',
        answer(status, { error: { message: 'x', type: 'service_error', code } }),
      );
      // One code for this fault wherever it is met (edge's proxies throw the same error).
      expect(error).toMatchObject({
        code: 'internal_error',
        status: 500,
        message: 'Gateway configuration error (billing credential)',
      });
    }
  });

  it('maps unknown codes and bodies that are not errors to internal_error', () => {
    expect(
      errorFromAnswer('billing', answer(418, { error: { message: 'x', code: 'teapot' } })).code,
    ).toBe('internal_error');
    expect(errorFromAnswer('billing', answer(502, '<html>')).code).toBe('internal_error');
  });
});
