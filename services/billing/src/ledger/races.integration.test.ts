import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '@gateway/contracts';
import {
  ANY_AMOUNT_MODEL,
  DZD,
  HOLD_TTL_MS,
  admitHold,
  createLedgerHarness,
  expectedCost,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

let h: LedgerHarness;

beforeAll(async () => {
  h = await createLedgerHarness({ maxConnections: 20 });
});

afterAll(async () => {
  await h?.finish();
});

function codes(results: PromiseSettledResult<unknown>[]): string[] {
  return results
    .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    .map((r) => (r.reason instanceof GatewayError ? r.reason.code : String(r.reason)));
}

describe('scoped token spending-limit race', () => {
  it('100 concurrent holds whose remaining limit covers 10: exactly 10 succeed', async () => {
    for (let round = 0; round < 5; round += 1) {
      const accountId = await h.fundedAccount(1000n * DZD);
      // Limit 15 DZD, of which 5 DZD already spent: 10 DZD remain.
      const tokenId = await h.createToken(accountId, 15n * DZD);
      const first = await admitHold(h, { accountId, amountMicroDzd: 5n * DZD, tokenId });
      await h.ledger.settleHold(first.id, { inputTokens: 2_500_000, outputTokens: 0 });

      const results = await Promise.allSettled(
        Array.from({ length: 100 }, () =>
          admitHold(h, { accountId, amountMicroDzd: 1n * DZD, tokenId }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      expect(new Set(codes(results))).toEqual(new Set(['budget_exhausted']));
      const token = await h.prisma.scopedToken.findUniqueOrThrow({ where: { id: tokenId } });
      expect(token.spentMicroDzd).toBe(5n * DZD);
      expect(token.reservedMicroDzd).toBe(10n * DZD);
    }
  });
});

describe('settle/void race on one hold', () => {
  it('exactly one of settle and void wins, 200 times', async () => {
    const accountId = await h.fundedAccount(1000n * DZD);
    let settledWins = 0;
    for (let batch = 0; batch < 10; batch += 1) {
      const holds = await Promise.all(
        Array.from({ length: 20 }, () => admitHold(h, { accountId, amountMicroDzd: 1n * DZD })),
      );
      await Promise.all(
        holds.map(async (hold, index) => {
          const settle = () =>
            h.ledger.settleHold(hold.id, { inputTokens: 100, outputTokens: 100 });
          const cancel = () => h.ledger.voidHold(hold.id);
          const [a, b] = await Promise.allSettled(
            index % 2 === 0 ? [settle(), cancel()] : [cancel(), settle()],
          );
          const [settled, voided] = index % 2 === 0 ? [a!, b!] : [b!, a!];
          expect([settled.status, voided.status].sort()).toEqual(['fulfilled', 'rejected']);
          const loser = (settled.status === 'rejected' ? settled : voided) as PromiseRejectedResult;
          expect(loser.reason).toMatchObject({ code: 'conflict' });
          const final = await h.ledger.getHold(hold.id);
          if (settled.status === 'fulfilled') {
            settledWins += 1;
            expect(final?.status).toBe('settled');
            expect(loser.reason).toMatchObject({ details: { result: 'hold_settled' } });
          } else {
            expect(final?.status).toBe('voided');
            expect(loser.reason).toMatchObject({ details: { result: 'hold_voided' } });
          }
        }),
      );
    }
    const balance = await h.ledger.getBalance(accountId);
    expect(balance.pendingMicroDzd).toBe(0n);
    expect(balance.postedDebitsMicroDzd).toBe(BigInt(settledWins) * expectedCost(100n, 100n));
  });
});

describe('idempotent credit', () => {
  it('one Idempotency-Key sent 50 times concurrently: credited once, 50 identical answers', async () => {
    for (let round = 0; round < 5; round += 1) {
      const accountId = await h.createAccount();
      const input = {
        accountId,
        amountMicroDzd: 7_250_000n,
        reference: `invoice ${round}`,
        idempotencyKey: `key-${accountId}`,
      };
      const answers = await Promise.all(Array.from({ length: 50 }, () => h.ledger.credit(input)));
      for (const answer of answers) expect(answer).toEqual(answers[0]);
      expect(answers[0]!.balance.balanceMicroDzd).toBe(7_250_000n);
      expect((await h.ledger.getBalance(accountId)).postedCreditsMicroDzd).toBe(7_250_000n);
      expect(await h.prisma.ledgerTransaction.count({ where: { accountId } })).toBe(1);
    }
  });

  it('a conflicting body racing the same key: the first body wins, the others get 409', async () => {
    const accountId = await h.createAccount();
    const key = `key-mixed-${accountId}`;
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        h.ledger.credit({
          accountId,
          amountMicroDzd: BigInt(1 + (i % 2)) * DZD,
          reference: null,
          idempotencyKey: key,
        }),
      ),
    );
    // Whichever body claimed the key first: its 20 senders get one answer, the 20 others 409.
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(20);
    expect(codes(results)).toEqual(Array(20).fill('idempotency_key_conflict'));
    expect(await h.prisma.ledgerTransaction.count({ where: { accountId } })).toBe(1);
  });
});

describe('sweeper', () => {
  it('several replicas sweeping (and settles racing them) expire each hold exactly once', async () => {
    const accounts = await Promise.all(
      Array.from({ length: 8 }, () => h.fundedAccount(1000n * DZD)),
    );
    const tokens = await Promise.all(accounts.map((a) => h.createToken(a, null)));
    // The holds are the race's setup, placed 16 at a time: 400 at once queued for the pool past
    // Prisma's 10 s transaction wait on a loaded machine (a CPU hog beside CI).
    const holds: Awaited<ReturnType<typeof admitHold>>[] = [];
    for (let first = 0; first < 400; first += 16) {
      holds.push(
        ...(await Promise.all(
          Array.from({ length: 16 }, (_, offset) => {
            const i = first + offset;
            // Odd amounts too: a model that reaches every amount exactly.
            return admitHold(h, {
              accountId: accounts[i % accounts.length]!,
              amountMicroDzd: 10_000n + BigInt(i),
              model: ANY_AMOUNT_MODEL,
              tokenId: tokens[i % tokens.length]!,
            });
          }),
        )),
      );
    }
    const expiry = new Date(h.clock.now().getTime() + HOLD_TTL_MS);
    const ids = holds.map((hold) => hold.id);
    // Earlier tests left pending holds: the sweepers expire those as well.
    const othersPending = await h.prisma.hold.count({
      where: { status: 'pending', id: { notIn: ids } },
    });
    const replicas = Array.from({ length: 4 }, () => h.replica({ sweepBatchSize: 25 }));
    const settles = holds
      .filter((_, i) => i % 3 === 0)
      .map((hold) => h.ledger.settleHold(hold.id, { inputTokens: 1, outputTokens: 1 }));
    const [swept, settled] = await Promise.all([
      Promise.all(replicas.map((replica) => replica.expireHolds(expiry))),
      Promise.allSettled(settles),
    ]);
    const settledCount = settled.filter((r) => r.status === 'fulfilled').length;
    expect(new Set(codes(settled))).toEqual(
      settledCount === settles.length ? new Set() : new Set(['conflict']),
    );
    expect(swept.reduce((a, b) => a + b, 0) + settledCount).toBe(holds.length + othersPending);
    expect(await h.prisma.hold.count({ where: { id: { in: ids }, status: 'expired' } })).toBe(
      holds.length - settledCount,
    );
    for (const accountId of accounts) {
      expect((await h.ledger.getBalance(accountId)).pendingMicroDzd).toBe(0n);
    }
  });

  it('startSweeper expires stale holds in the background until stopped', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const hold = await admitHold(h, { accountId, amountMicroDzd: DZD });
    const expired: number[] = [];
    const errors: unknown[] = [];
    const stop = h.ledger.startSweeper({
      intervalMs: 10,
      onExpired: (count) => expired.push(count),
      onError: (error) => errors.push(error),
    });
    try {
      await sleep(50);
      expect((await h.ledger.getHold(hold.id))?.status).toBe('pending');
      h.clock.advance(HOLD_TTL_MS);
      for (let i = 0; i < 100 && (await h.ledger.getHold(hold.id))?.status === 'pending'; i += 1) {
        await sleep(10);
      }
    } finally {
      await stop();
    }
    expect((await h.ledger.getHold(hold.id))?.status).toBe('expired');
    expect(expired.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(errors).toEqual([]);
    expect((await h.ledger.getBalance(accountId)).availableMicroDzd).toBe(5n * DZD);
  });
});
