import { describe, expect, it } from '@jest/globals';
import type { RateLimitDecision } from './billing-api.js';
import { rateLimitHeaders } from './rate-limit.js';

const resetMs = Date.parse('2030-01-01T00:01:00.000Z');

describe('rateLimitHeaders', () => {
  it('sends limit, remaining and reset (unix ms) for an allowed request, no Retry-After', () => {
    const allowed: RateLimitDecision = {
      allowed: true,
      limit: 3,
      remaining: 2,
      resetMs,
      retryAfterS: 35,
    };
    expect(rateLimitHeaders(allowed)).toEqual({
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '2',
      'X-RateLimit-Reset': String(resetMs),
    });
  });

  it('adds Retry-After (whole seconds, as decided) when the request was refused', () => {
    const denied: RateLimitDecision = {
      allowed: false,
      limit: 3,
      remaining: 0,
      resetMs,
      retryAfterS: 25,
    };
    expect(rateLimitHeaders(denied)).toEqual({
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1893456060000',
      'Retry-After': '25',
    });
  });

  it('passes the numbers through unchanged (no rounding of its own)', () => {
    const headers = rateLimitHeaders({
      allowed: false,
      limit: 100_000,
      remaining: 0,
      resetMs: 1_700_000_000_123,
      retryAfterS: 1,
    });
    expect(headers['X-RateLimit-Limit']).toBe('100000');
    expect(headers['X-RateLimit-Reset']).toBe('1700000000123');
    expect(headers['Retry-After']).toBe('1');
  });

  it('is what the package exports', async () => {
    const contracts = await import('./index.js');
    expect(contracts.rateLimitHeaders).toBe(rateLimitHeaders);
  });
});
