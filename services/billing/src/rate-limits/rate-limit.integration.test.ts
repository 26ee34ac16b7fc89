import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from '../identity/fixtures.suite.js';
import { rateLimitError } from './rate-limit.js';

let h: IdentityHarness;

const newAccount = async () => (await h.identity.accounts.create({ name: 'Limited' })).id;

beforeAll(async () => {
  // 25 s into a minute: the window resets 35 s later.
  h = await setUpIdentity({ start: '2030-01-01T00:00:25.000Z' });
});

afterAll(async () => {
  await h?.close();
});

describe('rate limit', () => {
  it('counts requests in fixed one-minute windows with the numbers for headers', async () => {
    const accountId = await newAccount();
    const limiter = h.identity.rateLimiter;
    const resetMs = Date.parse('2030-01-01T00:01:00.000Z');
    const first = await limiter.consume({ accountId: accountId, limit: 3 });
    expect(first).toEqual({ allowed: true, limit: 3, remaining: 2, resetMs, retryAfterS: 35 });
    h.clock.advance(10_400);
    expect(await limiter.consume({ accountId: accountId, limit: 3 })).toEqual({
      allowed: true,
      limit: 3,
      remaining: 1,
      resetMs,
      retryAfterS: 25, // 24.6 s, rounded up
    });
    expect(await limiter.consume({ accountId: accountId, limit: 3 })).toMatchObject({
      allowed: true,
      remaining: 0,
    });
    const denied = await limiter.consume({ accountId: accountId, limit: 3 });
    expect(denied).toEqual({ allowed: false, limit: 3, remaining: 0, resetMs, retryAfterS: 25 });

    const error = await gatewayErrorOf(limiter.enforce({ accountId: accountId, limit: 3 }));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      code: 'rate_limit_exceeded',
      message: 'Account rate limit reached',
      details: { retryAfterS: 25, limit: 3, remaining: 0, resetMs },
    });
    expect((error as GatewayError).status).toBe(429);

    // The next window starts from zero.
    h.clock.set(resetMs);
    expect(await limiter.enforce({ accountId: accountId, limit: 3 })).toEqual({
      allowed: true,
      limit: 3,
      remaining: 2,
      resetMs: resetMs + 60_000,
      retryAfterS: 60,
    });
    // A lower limit applies at once (the count is kept, the limit is the caller's).
    expect(await limiter.consume({ accountId: accountId, limit: 1 })).toMatchObject({
      allowed: false,
      remaining: 0,
    });
  });

  it('is exact under concurrency across separate clients (limit 20, 60 calls → 20 allowed)', async () => {
    const accountId = await newAccount();
    const replicas = [h.newIdentity().identity, h.newIdentity().identity];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        replicas[i % 2]!.rateLimiter.consume({ accountId: accountId, limit: 20 }),
      ),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
    const remaining = results.map((r) => r.remaining).sort((a, b) => b - a);
    expect(remaining.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
    const { rows } = await h.sql.query(
      'SELECT count FROM rate_limit_windows WHERE account_id = $1',
      [accountId],
    );
    expect(rows).toEqual([{ count: 60 }]);
  });

  it('keeps accounts apart', async () => {
    const a = await newAccount();
    const b = await newAccount();
    await h.identity.rateLimiter.consume({ accountId: a, limit: 1 });
    expect((await h.identity.rateLimiter.consume({ accountId: a, limit: 1 })).allowed).toBe(false);
    expect((await h.identity.rateLimiter.consume({ accountId: b, limit: 1 })).allowed).toBe(true);
  });

  it('prunes old windows: per account on a new window, and in bounded batches', async () => {
    const windows = async (accountId: string) =>
      (
        await h.sql.query(
          'SELECT window_start_ms::text AS start FROM rate_limit_windows WHERE account_id = $1 ORDER BY 1',
          [accountId],
        )
      ).rows.map((r: { start: string }) => Number(r.start));

    const active = await newAccount();
    const start = h.clock.ms;
    await h.identity.rateLimiter.consume({ accountId: active, limit: 10 });
    h.clock.advance(60_000);
    await h.identity.rateLimiter.consume({ accountId: active, limit: 10 });
    await h.identity.rateLimiter.consume({ accountId: active, limit: 10 });
    const current = Math.floor(h.clock.ms / 60_000) * 60_000;
    expect(await windows(active)).toEqual([current]);

    // Quiet accounts keep one stale row each until the sweeper's batches remove them.
    const quiet = await Promise.all(Array.from({ length: 5 }, newAccount));
    for (const id of quiet) await h.identity.rateLimiter.consume({ accountId: id, limit: 10 });
    h.clock.set(start + 10 * 60_000);
    const total = async () =>
      Number((await h.sql.query('SELECT count(*) FROM rate_limit_windows')).rows[0].count);
    const before = await total();
    expect(before).toBeGreaterThanOrEqual(6);
    expect(await h.identity.rateLimiter.prune(2)).toBe(2);
    expect(await total()).toBe(before - 2);
    let removed = 0;
    for (
      let n = await h.identity.rateLimiter.prune(2);
      n > 0;
      n = await h.identity.rateLimiter.prune(2)
    ) {
      removed += n;
    }
    expect(await total()).toBe(0);
    expect(removed).toBe(before - 2);
  });

  it('builds the 429 error from a decision', () => {
    const error = rateLimitError({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 1_000,
      retryAfterS: 7,
    });
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.details).toEqual({ retryAfterS: 7, limit: 5, remaining: 0, resetMs: 1_000 });
  });
});
