import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLedgerService, type LedgerService } from '../ledger/index.js';
import {
  fundedAccount,
  gatewayErrorOf,
  setUpIdentity,
  type IdentityHarness,
  putStandardChatModel,
} from '../identity/fixtures.suite.js';
import { rateSubjectOf } from './rate-limit.js';

/*
 * Per-key rate limits against real PostgreSQL: a scoped token's own requests
 * and tokens per minute beside its key's and the account's, in admission's one statement and on
 * the routes that place no hold; concurrent admissions from two billing wirings; the tokens a
 * hold did not use given back when it ends, whichever way it ends. (The key's own limits across
 * two edge replicas: test/abuse/key-rate-limits.test.ts.)
 */

let h: IdentityHarness;
let ledger: LedgerService;
const MODEL = 'org/limited-chat';
// Every admission below reserves 1 000 prompt + 500 output tokens = 1 500 tokens.
const REQUEST_TOKENS = 1_500;

const admit = (credential: string, identity = h.identity) =>
  identity.admission.admit(`Bearer ${credential}`, {
    model: MODEL,
    estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
    priority: false,
  });

beforeAll(async () => {
  // 10 s into a minute: every test here stays in one window unless it moves the clock.
  h = await setUpIdentity({ start: '2030-01-01T10:00:10Z' });
  ledger = createLedgerService({ prisma: h.prisma, clock: h.clock.now });
  await putStandardChatModel(h, MODEL);
});

afterAll(async () => {
  await h?.close();
});

/** An account, its key `auto` and a scoped token it signed, with the token's registry id. */
async function tokenOfNewAccount() {
  const account = await fundedAccount(h);
  const { token } = await h.identity.scopedTokens.create(account.accountId, {
    api_key_name: 'auto',
  });
  const row = await h.prisma.scopedToken.findFirstOrThrow({
    where: { accountId: account.accountId },
  });
  return { ...account, token, tokenId: row.id };
}

describe("a scoped token's own rate limits", () => {
  it('counts its requests in its own window, beside the account and the key', async () => {
    h.clock.set('2030-01-01T10:00:10Z');
    const t = await tokenOfNewAccount();
    await h.identity.keyRateLimits.put(
      t.accountId,
      { scopedTokenId: t.tokenId },
      { requests_per_minute: 2 },
    );
    const first = await admit(t.token);
    expect(first.admission.rateLimit).toMatchObject({
      allowed: true,
      limit: 2,
      remaining: 1,
      scope: 'scoped_token',
    });
    await admit(t.token);
    const refused = await gatewayErrorOf(admit(t.token));
    expect(refused).toMatchObject({
      code: 'rate_limit_exceeded',
      message: 'Scoped token rate limit reached',
    });
    // The key itself is not limited by its token's window; the account counted all four.
    const byKey = await admit(t.key);
    expect(byKey.admission.rateLimit).toEqual(
      expect.objectContaining({ limit: 100, remaining: 96, allowed: true }),
    );
    expect(byKey.admission.rateLimit.scope).toBeUndefined();
    // Routes without a hold count in the token's window too (and are refused there).
    const principal = await h.identity.authenticator.authenticate(`Bearer ${t.token}`);
    const counted = await gatewayErrorOf(h.identity.rateLimiter.enforce(rateSubjectOf(principal)));
    expect(counted.code).toBe('rate_limit_exceeded');
    // A new minute starts over.
    h.clock.advance(60_000);
    expect((await admit(t.token)).admission.rateLimit).toMatchObject({ remaining: 1 });
  });

  it("refuses past the token's tokens per minute, and the key's covers its tokens", async () => {
    h.clock.set('2030-01-01T11:00:10Z');
    const t = await tokenOfNewAccount();
    // The token: room for two requests; the key: three (and a little), shared with the token.
    await h.identity.keyRateLimits.put(
      t.accountId,
      { scopedTokenId: t.tokenId },
      { tokens_per_minute: 2 * REQUEST_TOKENS + 10 },
    );
    await h.identity.keyRateLimits.put(
      t.accountId,
      { apiKey: 'auto' },
      { tokens_per_minute: 3 * REQUEST_TOKENS + 300 },
    );
    const first = await admit(t.token);
    expect(first.admission.rateLimit.tokens).toEqual({
      limit: 2 * REQUEST_TOKENS + 10,
      remaining: REQUEST_TOKENS + 10,
      resetMs: Date.parse('2030-01-01T11:01:00Z'),
    });
    await admit(t.token);
    const byToken = await gatewayErrorOf(admit(t.token));
    expect(byToken.message).toBe(
      'Scoped token rate limit reached: 3000 of 3010 tokens per minute used, and this request ' +
        'needs up to 1500',
    );
    await admit(t.key);
    const byKey = await gatewayErrorOf(admit(t.key));
    expect(byKey.message).toBe(
      'API key rate limit reached: 4500 of 4800 tokens per minute used, and this request needs ' +
        'up to 1500',
    );
    // A settled hold gives back what it did not use (1 500 − 200), a void all of it.
    await ledger.settleHold(first.admission.hold.id, { inputTokens: 100, outputTokens: 100 });
    expect((await admit(t.key)).admission.rateLimit.tokens).toMatchObject({ remaining: 100 });
    expect((await gatewayErrorOf(admit(t.key))).code).toBe('rate_limit_exceeded');
    const holds = await h.prisma.hold.findMany({
      where: { accountId: t.accountId, status: 'pending' },
    });
    await ledger.voidHold(holds[0]!.id);
    expect((await admit(t.key)).admission.rateLimit.tokens).toMatchObject({ remaining: 100 });
  });

  it('folds the tokens given back into the window as the next admission reads them', async () => {
    // Each return is read once: the window's count stays right, and an admission never sums
    // all of the minute's returns again.
    h.clock.set('2030-01-01T12:00:10Z');
    const t = await tokenOfNewAccount();
    await h.identity.keyRateLimits.put(
      t.accountId,
      { apiKey: 'auto' },
      { tokens_per_minute: 10 * REQUEST_TOKENS },
    );
    const placed = [await admit(t.key), await admit(t.key), await admit(t.key)];
    for (const { admission } of placed) {
      await ledger.settleHold(admission.hold.id, { inputTokens: 100, outputTokens: 100 });
    }
    const returns = async () =>
      Number(
        (
          await h.sql.query<{ n: string }>(
            'SELECT count(*) AS n FROM key_token_returns r JOIN api_keys k ON k.id = r.owner_id WHERE k.account_id = $1',
            [t.accountId],
          )
        ).rows[0]?.n,
      );
    expect(await returns()).toBe(3);
    // Three holds that used 200 tokens each, and this one's 1 500 reserved.
    expect((await admit(t.key)).admission.rateLimit.tokens).toMatchObject({
      remaining: 10 * REQUEST_TOKENS - 3 * 200 - REQUEST_TOKENS,
    });
    expect(await returns()).toBe(0);
    expect((await admit(t.key)).admission.rateLimit.tokens).toMatchObject({
      remaining: 10 * REQUEST_TOKENS - 3 * 200 - 2 * REQUEST_TOKENS,
    });
  });

  it('starts a window created again from nothing, its stale returns dropped', async () => {
    // A replica whose clock is behind admits in a minute that a newer minute's admission has
    // already dropped: the tokens counted there went with the row, so the returns of those
    // holds must not be taken off the new row (they would push it below zero and let more in).
    h.clock.set('2030-01-01T13:00:10Z');
    const t = await fundedAccount(h);
    await h.identity.keyRateLimits.put(
      t.accountId,
      { apiKey: 'auto' },
      { tokens_per_minute: 10 * REQUEST_TOKENS },
    );
    const earlier = [await admit(t.key), await admit(t.key)];
    h.clock.set('2030-01-01T13:01:10Z');
    await admit(t.key);
    for (const { admission } of earlier) {
      await ledger.settleHold(admission.hold.id, { inputTokens: 100, outputTokens: 100 });
    }
    h.clock.set('2030-01-01T13:00:50Z');
    expect((await admit(t.key)).admission.rateLimit.tokens).toMatchObject({
      remaining: 10 * REQUEST_TOKENS - REQUEST_TOKENS,
    });
    const { rows } = await h.sql.query<{ n: string }>(
      'SELECT count(*) AS n FROM key_token_returns r JOIN api_keys k ON k.id = r.owner_id WHERE k.account_id = $1 AND r.window_start_ms = $2',
      [t.accountId, Date.parse('2030-01-01T13:00:00Z')],
    );
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it('admits exactly what fits when two billing replicas admit at once', async () => {
    h.clock.set('2030-01-01T12:00:10Z');
    const t = await fundedAccount(h);
    await h.identity.keyRateLimits.put(
      t.accountId,
      { apiKey: 'auto' },
      { tokens_per_minute: 7 * REQUEST_TOKENS + 100, requests_per_minute: 30 },
    );
    const replicas = [h.identity, h.newIdentity().identity];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => admit(t.key, replicas[i % 2])),
    );
    const admitted = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(admitted).toHaveLength(7);
    const codes = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [(outcome.reason as { code: string }).code] : [],
    );
    expect(codes).toEqual(Array(33).fill('rate_limit_exceeded'));
    // Thirty requests fit the request window; the other ten were refused by it first.
    const byRequests = outcomes.filter(
      (outcome) =>
        outcome.status === 'rejected' &&
        (outcome.reason as Error).message === 'API key rate limit reached',
    );
    expect(byRequests).toHaveLength(10);
  });
});
