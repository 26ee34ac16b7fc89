import { describe, expect, it } from '@jest/globals';
import { costMicroDzd } from '@gateway/contracts';
import fc from 'fast-check';
import { createServiceMetrics } from '@gateway/observability';
import { pgPoolOf } from '../db/client.js';
import { instrumentBilling } from '../metrics.js';
import { verbosePlan } from '../testing/query-plan.suite.js';
import { newId } from '../identity/secrets.js';
import {
  DZD,
  admitHold,
  expectedCost,
  useLedgerHarness,
  type AdmittedHold,
} from './ledger-test-support.suite.js';

/*
 * The hot path's SQL (migration 20261215090000): the cost function against costMicroDzd, the
 * batched settlement statement, and one busy account under many concurrent settlements.
 */

const harness = useLedgerHarness();

const hold = (accountId: string, amountMicroDzd = DZD, priority = false): Promise<AdmittedHold> =>
  admitHold(harness(), { accountId, amountMicroDzd, priority });

describe('ledger_cost_micro_dzd', () => {
  it('equals costMicroDzd exactly, huge values included', async () => {
    const h = harness();
    const pool = pgPoolOf(h.prisma);
    const int8 = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n });
    const small = fc.bigInt({ min: 0n, max: 10n ** 7n });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(small, int8),
        fc.oneof(small, int8),
        fc.oneof(small, int8),
        fc.oneof(small, int8),
        fc.boolean(),
        async (inputTokens, outputTokens, inputPrice, outputPrice, priority) => {
          const { rows } = await pool.query<{ cost: string }>(
            'SELECT ledger_cost_micro_dzd($1, $2, $3, $4, $5)::text AS cost',
            [inputTokens, outputTokens, inputPrice, outputPrice, priority].map(String),
          );
          const expected = costMicroDzd({
            inputTokens,
            outputTokens,
            inputPriceMicroDzdPerM: inputPrice,
            outputPriceMicroDzdPerM: outputPrice,
            priority,
          });
          expect(rows[0]?.cost).toBe(expected.toString());
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is NULL when any argument is NULL, as a STRICT function would be', async () => {
    const pool = pgPoolOf(harness().prisma);
    const args = ['100', '200', '3', '4', 'true'];
    for (let position = 0; position < args.length; position += 1) {
      const values = args.map((value, index) => (index === position ? null : value));
      const { rows } = await pool.query<{ cost: string | null }>(
        'SELECT ledger_cost_micro_dzd($1, $2, $3, $4, $5)::text AS cost',
        values,
      );
      expect([position, rows[0]?.cost]).toEqual([position, null]);
    }
  });

  it('is inlined where it is called, with the worst case that calls it: not run as a function', async () => {
    // A SQL function the planner cannot inline has its body parsed and planned again in every
    // transaction that calls it; inlined, it is part of its caller's cached plan.
    const pool = pgPoolOf(harness().prisma);
    for (const call of [
      'ledger_cost_micro_dzd(g, g, g, g, g > 1)',
      'billing_worst_case_micro_dzd(g, g, 1, 1000, g, g, g > 1)',
    ]) {
      const plan = await verbosePlan(
        pool,
        `SELECT ${call} FROM generate_series(1::bigint, 2) AS g`,
      );
      expect(plan).toContain('div(');
      expect(plan).not.toMatch(/ledger_cost_micro_dzd|billing_worst_case_micro_dzd/);
    }
  });

  it('is what a settlement charges (priority tier, rounding up)', async () => {
    const h = harness();
    const accountId = await h.fundedAccount(10n * DZD);
    const placed = await hold(accountId, 5n * DZD, true);
    const result = await h.ledger.settleHold(placed.id, { inputTokens: 333, outputTokens: 7 });
    expect(result.costMicroDzd).toBe(expectedCost(333n, 7n, true));
  });
});

describe('a settlement above the hold', () => {
  it('charges the hold, and records the difference on the hold, the journal and the metric', async () => {
    const h = harness();
    const registry = createServiceMetrics('billing', { defaultMetrics: false }).registry;
    instrumentBilling(registry, { prisma: h.prisma, ledger: h.ledger });
    const ledger = h.ledger;
    const capped = async () =>
      (await registry.getSingleMetric('billing_settlements_capped')?.get())?.values[0]?.value;
    expect(await capped()).toBe(0);

    const accountId = await h.fundedAccount(10n * DZD);
    const small = await hold(accountId, 1_000n);
    // The node reported far more than the hold was sized for.
    const result = await ledger.settleHold(small.id, { inputTokens: 100_000, outputTokens: 0 });
    const usageCost = expectedCost(100_000n, 0n, false);
    expect(usageCost).toBeGreaterThan(1_000n);
    expect(result.costMicroDzd).toBe(1_000n);
    const { rows } = await pgPoolOf(h.prisma).query<{ uncapped: string | null }>(
      'SELECT uncapped_cost_micro_dzd::text AS uncapped FROM holds WHERE id = $1',
      [small.id],
    );
    expect(rows[0]?.uncapped).toBe(usageCost.toString());
    const lines = (await ledger.statement(accountId, { from: new Date(0), to: new Date() })).lines;
    const settlement = lines.find((line) => line.kind === 'hold_settlement');
    expect(settlement?.reference).toContain(`capped at the hold (usage cost ${usageCost} µDZD)`);
    expect(await capped()).toBe(1);

    // Within the hold, nothing is marked.
    const roomy = await hold(accountId, DZD);
    await ledger.settleHold(roomy.id, { inputTokens: 10, outputTokens: 10 });
    const after = await pgPoolOf(h.prisma).query<{ uncapped: string | null }>(
      'SELECT uncapped_cost_micro_dzd::text AS uncapped FROM holds WHERE id = $1',
      [roomy.id],
    );
    expect(after.rows[0]?.uncapped).toBeNull();
    expect(await capped()).toBe(1);
  });
});

describe('batched settlement', () => {
  it('settles the good holds of a batch that holds a bad one, each caller its own answer', async () => {
    const h = harness();
    // One statement in flight at a time and up to 64 per batch: the ones queued while the
    // first runs leave together.
    const ledger = h.replica({ settleBatchMaxInFlight: 1, settleBatchMaxSize: 64 });
    const accountId = await h.fundedAccount(100n * DZD);
    const holds = await Promise.all(Array.from({ length: 10 }, () => hold(accountId)));
    const voided = holds[3]!;
    await ledger.voidHold(voided.id);
    const usage = { inputTokens: 100, outputTokens: 100 };
    const missing = newId('hold');
    const results = await Promise.allSettled([
      ...holds.map((held) => ledger.settleHold(held.id, usage)),
      ledger.settleHold(missing, usage),
    ]);
    const codes = results.map((r) =>
      r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok',
    );
    expect(codes).toEqual([
      'ok',
      'ok',
      'ok',
      'conflict',
      ...Array(6).fill('ok'),
      'resource_not_found',
    ]);
    const cost = expectedCost(100n, 100n);
    const balance = await h.ledger.getBalance(accountId);
    expect(balance.postedDebitsMicroDzd).toBe(9n * cost);
    expect(balance.pendingMicroDzd).toBe(0n);
    const transactions = new Set(
      results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.transactionId] : [])),
    );
    expect(transactions.size).toBe(9);
  });

  // The settlement as the worker calls it (the ledger's batch, then each hold's usage record),
  // ten input and ten output tokens per hold, nothing else reported.
  const SETTLE = 'SELECT * FROM usage_settle_holds($1, $2, $3, $4, now(), $5, $6, $7, $8)';
  const settleArgs = (holdIds: string[], transactionIds: string[]) => {
    const each = <T>(value: T) => holdIds.map(() => value);
    return [
      holdIds,
      each('10'),
      each('10'),
      transactionIds,
      each(null),
      each(null),
      each(null),
      each(false),
    ];
  };

  it('a failing item is rolled back alone: the others of the batch commit', async () => {
    const h = harness();
    const accountId = await h.fundedAccount(100n * DZD);
    const [good, bad] = await Promise.all([hold(accountId), hold(accountId)]);
    // A journal id that already exists makes that one item's INSERT fail (unique violation).
    const { transactionId: taken } = await h.ledger.credit({
      accountId,
      amountMicroDzd: 1n,
      reference: 'x',
    });
    const pool = pgPoolOf(h.prisma);
    const { rows } = await pool.query<{ hold_id: string; outcome: string; error_state: string }>(
      SETTLE,
      settleArgs([good!.id, bad!.id], [newId('txn'), taken]),
    );
    expect(Object.fromEntries(rows.map((r) => [r.hold_id, [r.outcome, r.error_state]]))).toEqual({
      [good!.id]: ['settled', null],
      [bad!.id]: ['error', '23505'],
    });
    expect((await h.ledger.getHold(bad!.id))?.status).toBe('pending');
    expect((await h.ledger.getHold(good!.id))?.status).toBe('settled');
    await h.ledger.voidHold(bad!.id);
  });

  it('finds its rows by their key on every call: no scan of the holds or journal tables', async () => {
    const h = harness();
    const accountId = await h.fundedAccount(300n * DZD);
    // Settled and pending holds already there: a plan that found a batch's holds by their
    // status, not their ids, would read every one of them on each call.
    const earlier = await Promise.all(Array.from({ length: 100 }, () => hold(accountId)));
    const bystanders = await Promise.all(Array.from({ length: 100 }, () => hold(accountId)));
    const pool = pgPoolOf(h.prisma);
    await pool.query(
      SETTLE,
      settleArgs(
        earlier.map((held) => held.id),
        earlier.map(() => newId('txn')),
      ),
    );
    // Settled in pairs: a batch of one is settled by the loop, two or more set-based.
    const pairs = await Promise.all(
      Array.from({ length: 8 }, async () => [await hold(accountId), await hold(accountId)]),
    );
    // One session: from the sixth call on, PL/pgSQL runs the function's cached generic plan,
    // which is planned for ten items and the statistics the tables have (none yet, here).
    const client = await pool.connect();
    try {
      // This session's counts not yet reported (pg_stat_xact_*): read around each call.
      const counts = async () => {
        const { rows } = await client.query<{ relname: string; seq: string; fetched: string }>(
          `SELECT relname, seq_scan AS seq, idx_tup_fetch AS fetched FROM pg_stat_xact_user_tables
            WHERE relname IN ('holds', 'ledger_transactions') ORDER BY relname`,
        );
        return rows.map((row) => [row.relname, Number(row.seq), Number(row.fetched)] as const);
      };
      const reads: string[] = [];
      for (const pair of pairs) {
        await client.query('BEGIN');
        const before = await counts();
        await client.query(
          SETTLE,
          settleArgs(
            pair.map((held) => held.id),
            pair.map(() => newId('txn')),
          ),
        );
        const after = await counts();
        await client.query('COMMIT');
        // A few lookups of each hold by its key (lock, checks, update, usage record), none of
        // the 100 settled before or of the 100 pending.
        reads.push(
          after
            .map(([name, seq, fetched], i) => {
              const read = fetched - before[i]![2];
              return `${name} ${seq - before[i]![1]} ${read < 30 ? 'few' : read}`;
            })
            .join(', '),
        );
      }
      expect(reads).toEqual(Array(pairs.length).fill('holds 0 few, ledger_transactions 0 few'));
    } finally {
      client.release();
    }
    for (const held of bystanders) await h.ledger.voidHold(held.id);
  });

  it('N concurrent settlements on ONE account all succeed, money exact', async () => {
    const h = harness();
    const n = 200;
    const accountId = await h.fundedAccount(BigInt(n) * DZD);
    const holds = await Promise.all(Array.from({ length: n }, () => hold(accountId)));
    const replicas = [h.ledger, h.replica(), h.replica()];
    const results = await Promise.all(
      holds.map((held, i) =>
        replicas[i % replicas.length]!.settleHold(held.id, { inputTokens: i, outputTokens: 3 }),
      ),
    );
    expect(results.every((r) => !r.replayed)).toBe(true);
    const total = holds.reduce((sum, _, i) => sum + expectedCost(BigInt(i), 3n), 0n);
    const balance = await h.ledger.getBalance(accountId);
    expect(balance.postedDebitsMicroDzd).toBe(total);
    expect(balance.pendingMicroDzd).toBe(0n);
    expect(balance.balanceMicroDzd).toBe(BigInt(n) * DZD - total);
    // Settling them all again: same answers, nothing moves.
    const again = await Promise.all(
      holds.map((held, i) => h.ledger.settleHold(held.id, { inputTokens: i, outputTokens: 3 })),
    );
    expect(again.map((r) => [r.replayed, r.costMicroDzd, r.transactionId])).toEqual(
      results.map((r) => [true, r.costMicroDzd, r.transactionId]),
    );
    expect((await h.ledger.getBalance(accountId)).postedDebitsMicroDzd).toBe(total);
  });
});
