import { describe, expect, it } from '@jest/globals';
import { DEFAULT_SCHEDULE_A_MS, DEFAULT_SCHEDULE_B_MS } from '../config.js';
import {
  decide,
  firstDelayMs,
  parseRetryAfterMs,
  type AttemptResult,
  type RetryPolicy,
} from './schedule.js';

const MINUTE_MS = 60_000;
const policyA = (random = () => 0): RetryPolicy => ({
  delaysMs: DEFAULT_SCHEDULE_A_MS,
  jitterRatio: 0.1,
  random,
});
const response = (statusCode: number, retryAfterMs: number | null = null): AttemptResult => ({
  statusCode,
  latencyMs: 20,
  failure: null,
  retryAfterMs,
  detail: null,
});
const failure = (kind: 'timeout' | 'network' | 'refused'): AttemptResult => ({
  statusCode: null,
  latencyMs: 5000,
  failure: kind,
  retryAfterMs: null,
  detail: kind,
});

describe('retry schedule', () => {
  it('Variant A: at once, then retries after 1, 2, 4, 8, 16, 30, 30, 30 minutes: 9 attempts', () => {
    expect(DEFAULT_SCHEDULE_A_MS.map((ms) => ms / MINUTE_MS)).toEqual([
      0, 1, 2, 4, 8, 16, 30, 30, 30,
    ]);
    const delays: number[] = [];
    let attempt = 1;
    for (let verdict = decide(response(500), attempt, policyA()); verdict.outcome === 'retry';) {
      delays.push(verdict.delayMs / MINUTE_MS);
      attempt += 1;
      verdict = decide(response(500), attempt, policyA());
    }
    expect(delays).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
    expect(attempt).toBe(9);
    expect(decide(response(500), 9, policyA())).toEqual({ outcome: 'dropped', error: 'HTTP 500' });
  });

  it('Variant B: three attempts, after 30 s, 5 min and 30 min', () => {
    expect(DEFAULT_SCHEDULE_B_MS).toEqual([30_000, 5 * MINUTE_MS, 30 * MINUTE_MS]);
    const policyB: RetryPolicy = {
      delaysMs: DEFAULT_SCHEDULE_B_MS,
      jitterRatio: 0,
      random: () => 0,
    };
    expect(firstDelayMs(policyB)).toBe(30_000);
    expect(decide(failure('timeout'), 1, policyB)).toMatchObject({ delayMs: 5 * MINUTE_MS });
    expect(decide(failure('timeout'), 2, policyB)).toMatchObject({ delayMs: 30 * MINUTE_MS });
    expect(decide(failure('timeout'), 3, policyB).outcome).toBe('dropped');
  });

  it('adds up to the jitter ratio, never less than the schedule', () => {
    expect(
      decide(
        response(503),
        1,
        policyA(() => 0),
      ),
    ).toMatchObject({ delayMs: MINUTE_MS });
    expect(
      decide(
        response(503),
        1,
        policyA(() => 0.999_999),
      ),
    ).toMatchObject({
      delayMs: 66_000,
    });
  });

  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [599, 'retry'],
    [400, 'failed'],
    [401, 'failed'],
    [404, 'failed'],
    [410, 'failed'],
    [301, 'failed'],
    [302, 'failed'],
    [307, 'failed'],
    [101, 'failed'],
  ])('HTTP %i → %s', (status, outcome) => {
    expect(decide(response(status), 1, policyA()).outcome).toBe(outcome);
  });

  it('retries timeouts and network errors, fails refused destinations at once', () => {
    expect(decide(failure('timeout'), 1, policyA()).outcome).toBe('retry');
    expect(decide(failure('network'), 1, policyA()).outcome).toBe('retry');
    expect(decide(failure('refused'), 1, policyA()).outcome).toBe('failed');
  });

  it('says why: redirects are named as not followed', () => {
    expect(decide(response(302), 1, policyA())).toEqual({
      outcome: 'failed',
      error: 'redirect not followed (HTTP 302)',
    });
  });

  it('honours Retry-After up to the longest step of the schedule', () => {
    expect(decide(response(429, 10 * MINUTE_MS), 1, policyA())).toMatchObject({
      delayMs: 10 * MINUTE_MS,
    });
    expect(decide(response(429, 1_000), 1, policyA())).toMatchObject({ delayMs: MINUTE_MS });
    expect(decide(response(429, 99 * MINUTE_MS), 1, policyA())).toMatchObject({
      delayMs: 30 * MINUTE_MS,
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const nowMs = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('120', nowMs)).toBe(120_000);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', nowMs)).toBe(30_000);
    expect(parseRetryAfterMs(undefined, nowMs)).toBeNull();
    expect(parseRetryAfterMs('soon', nowMs)).toBeNull();
    expect(parseRetryAfterMs('-5', nowMs)).toBeNull();
  });
});
