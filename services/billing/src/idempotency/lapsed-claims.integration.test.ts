import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { IdempotencyRef, StoredResponse } from '@gateway/contracts';
import { Keyring } from '@gateway/crypto';
import { pgPoolOf } from '../db/client.js';
import { RequestIdempotency } from '../http/request-idempotency.js';
import { gatewayErrorOf } from '../identity/fixtures.suite.js';
import {
  admitHold,
  createLedgerHarness,
  DZD,
  type LedgerHarness,
} from '../ledger/ledger-test-support.suite.js';

/*
 * An Idempotency-Key claim names its request's hold (ADR 0067). Edge keeps an answer for its key
 * before it sends it, so a claim left in progress past its lease with its hold settled was never
 * answered: billing refunds the hold and frees the key; edge's late answer then finds its claim
 * lost and is not sent. Until then the key is not taken over, nor purged.
 */

const LEASE_MS = 60_000;
let h: LedgerHarness;
let idempotency: RequestIdempotency;

beforeAll(async () => {
  h = await createLedgerHarness();
  idempotency = new RequestIdempotency({
    run: (work) => h.identity.store.transaction(work),
    clock: h.clock.now,
    keyring: Keyring.parse(randomBytes(32).toString('base64')),
  });
});

afterAll(async () => {
  await h?.finish();
});

const refOf = (accountId: string, key: string): IdempotencyRef => ({
  accountId,
  key,
  requestHash: createHash('sha256').update(`body of ${key}`).digest('hex'),
});

const answer: StoredResponse = {
  status: 200,
  contentType: 'application/json',
  body: '{"ok":true}',
  encoding: 'utf8',
};

/** A request claimed under `key` whose hold `holdId` was admitted and settled. */
async function answeredRequest(key: string, holdId: string) {
  const accountId = await h.fundedAccount(10n * DZD);
  const ref = refOf(accountId, key);
  expect(await idempotency.claim(ref, LEASE_MS, holdId)).toEqual({ outcome: 'claimed' });
  await admitHold(h, { accountId, amountMicroDzd: DZD, holdId });
  const settled = await h.ledger.settleHold(holdId, { inputTokens: 1000, outputTokens: 100 });
  return { accountId, ref, costMicroDzd: settled.costMicroDzd };
}

const balanceOf = async (accountId: string) =>
  (await h.ledger.getBalance(accountId)).balanceMicroDzd;

const recordCount = async (ref: IdempotencyRef) => {
  const { rows } = await pgPoolOf(h.prisma).query<{ n: number }>(
    'SELECT count(*)::int AS n FROM idempotency_records WHERE key = $1',
    [`${ref.accountId} ${ref.key}`],
  );
  return rows[0]!.n;
};

describe('an Idempotency-Key claim that lapses unanswered', () => {
  it('has its settled hold refunded and its key freed; its late answer is refused', async () => {
    const { accountId, ref, costMicroDzd } = await answeredRequest('lapsed', 'job-lapsed');
    expect(costMicroDzd).toBeGreaterThan(0n);
    const charged = await balanceOf(accountId);
    expect(await idempotency.settleLapsedClaims()).toEqual([]);

    h.clock.advance(LEASE_MS);
    // Past its lease the claim is neither taken over by a retry nor purged.
    expect(await gatewayErrorOf(idempotency.claim(ref, LEASE_MS, 'job-retry'))).toMatchObject({
      code: 'conflict',
    });
    await idempotency.purgeExpired();
    expect(await recordCount(ref)).toBe(1);

    expect(await idempotency.settleLapsedClaims()).toEqual([
      { holdId: 'job-lapsed', outcome: 'refunded', refundedMicroDzd: costMicroDzd },
    ]);
    expect(await balanceOf(accountId)).toBe(charged + costMicroDzd);
    expect(await h.ledger.refundHold('job-lapsed')).toMatchObject({ replayed: true });
    expect(await gatewayErrorOf(idempotency.complete(ref, answer))).toMatchObject({
      code: 'conflict',
    });
    expect(await idempotency.settleLapsedClaims()).toEqual([]);
    expect(await idempotency.claim(ref, LEASE_MS, 'job-retry')).toEqual({ outcome: 'claimed' });
    await idempotency.release(ref); // the retry charged nothing
  });

  it('is left alone while its hold is pending, and an answer kept in time is never refunded', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const ref = refOf(accountId, 'slow');
    expect(await idempotency.claim(ref, LEASE_MS, 'job-slow')).toEqual({ outcome: 'claimed' });
    await admitHold(h, { accountId, amountMicroDzd: DZD, holdId: 'job-slow' });
    h.clock.advance(LEASE_MS);
    expect(await idempotency.settleLapsedClaims()).toEqual([]);

    await h.ledger.settleHold('job-slow', { inputTokens: 1000, outputTokens: 100 });
    const charged = await balanceOf(accountId);
    await idempotency.complete(ref, answer);
    expect(await idempotency.settleLapsedClaims()).toEqual([]);
    expect(await balanceOf(accountId)).toBe(charged);
    expect(await idempotency.claim(ref, LEASE_MS, 'job-again')).toEqual({
      outcome: 'replay',
      response: answer,
    });
  });

  it('moves no money when its hold was voided or never placed, and frees the key', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const voided = refOf(accountId, 'voided');
    const unplaced = refOf(accountId, 'unplaced');
    await idempotency.claim(voided, LEASE_MS, 'job-voided');
    await admitHold(h, { accountId, amountMicroDzd: DZD, holdId: 'job-voided' });
    await h.ledger.voidHold('job-voided');
    await idempotency.claim(unplaced, LEASE_MS, 'job-unplaced');
    const before = await balanceOf(accountId);
    h.clock.advance(LEASE_MS);

    const ended = await idempotency.settleLapsedClaims();
    expect(ended).toEqual(
      expect.arrayContaining([
        { holdId: 'job-voided', outcome: 'not_settled', refundedMicroDzd: 0n },
        { holdId: 'job-unplaced', outcome: 'not_found', refundedMicroDzd: 0n },
      ]),
    );
    expect(ended).toHaveLength(2);
    expect(await balanceOf(accountId)).toBe(before);
    expect(await idempotency.claim(voided, LEASE_MS)).toEqual({ outcome: 'claimed' });
    expect(await idempotency.claim(unplaced, LEASE_MS)).toEqual({ outcome: 'claimed' });
  });

  it('is ended without a refund when edge reported its answer delivered (sent unkept)', async () => {
    const { accountId, ref } = await answeredRequest('sent-unkept', 'job-sent-unkept');
    await h.ledger.markAnswerDelivered('job-sent-unkept');
    const charged = await balanceOf(accountId);
    h.clock.advance(LEASE_MS);
    expect(await idempotency.settleLapsedClaims()).toEqual([
      { holdId: 'job-sent-unkept', outcome: 'delivered', refundedMicroDzd: 0n },
    ]);
    expect(await balanceOf(accountId)).toBe(charged);
    expect(await idempotency.claim(ref, LEASE_MS)).toEqual({ outcome: 'claimed' });
  });

  it('without a hold lapses as before: a retry takes the key over', async () => {
    const accountId = await h.fundedAccount(DZD);
    const ref = refOf(accountId, 'no-hold');
    await idempotency.claim(ref, LEASE_MS);
    h.clock.advance(LEASE_MS);
    expect(await idempotency.settleLapsedClaims()).toEqual([]);
    expect(await idempotency.claim(ref, LEASE_MS)).toEqual({ outcome: 'claimed' });
  });
});
