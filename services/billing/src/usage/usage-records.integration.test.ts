import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { settleHolds } from '@gateway/ledger-calls';
import { pgPoolOf } from '../db/client.js';
import { gatewayErrorOf } from '../identity/fixtures.suite.js';
import { newId } from '../identity/secrets.js';
import {
  API_KEY_NAME,
  DZD,
  HOLD_TTL_MS,
  MODEL,
  admitHold,
  admittableEstimate,
  createLedgerHarness,
  expectedCost,
  type LedgerHarness,
} from '../ledger/ledger-test-support.suite.js';
import { usageLogCsv } from './usage-csv.js';
import { createUsageService, type UsageService } from './usage-service.js';
import { UsageStore } from './usage-store.js';

/*
 * One usage record per ended hold, written in the transaction that ends it, its cost
 * the settlement's ledger amount; the invariant check reconciles records with the ledger and
 * notices a tampered record; retention keeps the reconciliation exact.
 */

let h: LedgerHarness;
let usage: UsageService;

beforeAll(async () => {
  h = await createLedgerHarness({ holdPublishGraceMs: 30_000 });
  usage = createUsageService({
    store: new UsageStore(pgPoolOf(h.prisma)),
    clock: h.clock.now,
    retentionDays: 400,
  });
});

afterAll(async () => {
  await h?.finish();
});

// At priority no prompt's worst case at MODEL's prices is exactly 1 DZD: the nearest below.
const admitOne = (accountId: string, priority = false) =>
  admitHold(h, {
    accountId,
    amountMicroDzd: priority ? admittableEstimate(DZD, true).amountMicroDzd : DZD,
    priority,
  });

interface RecordRow {
  hold_id: string;
  account_id: string;
  hold_status: string;
  outcome: string;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
  cost_micro_dzd: string;
  queue_latency_ms: string | null;
  generation_latency_ms: string | null;
  model: string;
  priority: boolean;
}

async function recordOf(holdId: string): Promise<RecordRow | undefined> {
  const { rows } = await pgPoolOf(h.prisma).query<RecordRow>(
    'SELECT * FROM usage_records WHERE hold_id = $1',
    [holdId],
  );
  return rows[0];
}

/** Five holds settled 1 s apart (10..14 input tokens, 1 output); their ids, oldest first. */
async function fiveSettledHolds(accountId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    h.clock.advance(1000);
    const hold = await admitOne(accountId);
    await h.ledger.settleHold(hold.id, { inputTokens: 10 + i, outputTokens: 1 });
    ids.push(hold.id);
  }
  return ids;
}

async function settledCharge(holdId: string): Promise<bigint> {
  const { rows } = await pgPoolOf(h.prisma).query<{ charged: string }>(
    `SELECT COALESCE(-SUM(e.amount_micro_dzd), 0)::text AS charged
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.hold_id = $1 AND e.account_id IS NOT NULL`,
    [holdId],
  );
  return BigInt(rows[0]?.charged ?? '0');
}

describe('a usage record per ended hold', () => {
  it('settled: tokens, reasoning, latencies, and the cost the ledger posted', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId, true);
    const startedAtMs = h.clock.now().getTime() + 250;
    const result = await h.ledger.settleHold(hold.id, {
      inputTokens: 1200,
      outputTokens: 300,
      reasoningTokens: 40,
      startedAtMs,
      generationMs: 900,
    });
    const record = await recordOf(hold.id);
    expect(record).toMatchObject({
      account_id: accountId,
      hold_status: 'settled',
      outcome: 'succeeded',
      prompt_tokens: '1200',
      completion_tokens: '300',
      reasoning_tokens: '40',
      queue_latency_ms: '250',
      generation_latency_ms: '900',
      model: MODEL,
      priority: true,
    });
    expect(BigInt(record!.cost_micro_dzd)).toBe(expectedCost(1200n, 300n, true));
    expect(BigInt(record!.cost_micro_dzd)).toBe(result.costMicroDzd);
    expect(BigInt(record!.cost_micro_dzd)).toBe(await settledCharge(hold.id));
  });

  it('a settlement writes its record once: one insert, no update', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    const client = await pgPoolOf(h.prisma).connect();
    // The backend's counts not yet reported may include its earlier transactions: the
    // difference across the call, in one transaction, is this call's.
    const writes = async () => {
      const { rows } = await client.query<{ ins: string; upd: string }>(
        `SELECT n_tup_ins AS ins, n_tup_upd AS upd FROM pg_stat_xact_user_tables
          WHERE relname = 'usage_records'`,
      );
      return { inserted: Number(rows[0]?.ins), updated: Number(rows[0]?.upd) };
    };
    try {
      await client.query('BEGIN');
      const before = await writes();
      const report = { inputTokens: 10n, outputTokens: 5n, reasoningTokens: 2n, generationMs: 7 };
      await settleHolds(
        client,
        [{ holdId: hold.id, transactionId: newId('txn'), ...report }],
        h.clock.now(),
      );
      const after = await writes();
      await client.query('COMMIT');
      expect({
        inserted: after.inserted - before.inserted,
        updated: after.updated - before.updated,
      }).toEqual({ inserted: 1, updated: 0 });
    } finally {
      client.release();
    }
    expect(await recordOf(hold.id)).toMatchObject({
      hold_status: 'settled',
      outcome: 'succeeded',
      prompt_tokens: '10',
      completion_tokens: '5',
      reasoning_tokens: '2',
      generation_latency_ms: '7',
    });
  });

  it('a replayed settlement changes nothing in the record', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    await h.ledger.settleHold(hold.id, { inputTokens: 10, outputTokens: 5 });
    const before = await recordOf(hold.id);
    const again = await h.ledger.settleHold(hold.id, {
      inputTokens: 10,
      outputTokens: 5,
      cancelled: true,
      reasoningTokens: 3,
    });
    expect(again.replayed).toBe(true);
    expect(await recordOf(hold.id)).toEqual(before);
  });

  it('settled after a cancellation: cancelled, still charged', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    const result = await h.ledger.settleHold(hold.id, {
      inputTokens: 50,
      outputTokens: 7,
      cancelled: true,
    });
    const record = await recordOf(hold.id);
    expect(record).toMatchObject({ outcome: 'cancelled', completion_tokens: '7' });
    expect(BigInt(record!.cost_micro_dzd)).toBe(result.costMicroDzd);
    expect(result.costMicroDzd).toBeGreaterThan(0n);
  });

  it('voided: failed by default, cancelled or refused when the caller says so, cost 0', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const [failed, cancelled, refused] = await Promise.all([
      admitOne(accountId),
      admitOne(accountId),
      admitOne(accountId),
    ]);
    await h.ledger.voidHold(failed!.id);
    await h.ledger.voidHold(cancelled!.id, { outcome: 'cancelled', generationMs: 12 });
    await h.ledger.voidHold(refused!.id, { outcome: 'refused' });
    // A repeated void (already voided) leaves the first outcome.
    await h.ledger.voidHold(refused!.id, { outcome: 'cancelled' });
    expect(await recordOf(failed!.id)).toMatchObject({ outcome: 'failed', cost_micro_dzd: '0' });
    expect(await recordOf(cancelled!.id)).toMatchObject({
      outcome: 'cancelled',
      generation_latency_ms: '12',
      hold_status: 'voided',
    });
    expect(await recordOf(refused!.id)).toMatchObject({ outcome: 'refused' });
  });

  it('expired: refused when never published, failed when its job was queued', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const unpublished = await admitOne(accountId);
    const published = await admitOne(accountId);
    const placedMs = h.clock.now().getTime();
    expect(await h.markPublished(published.id, new Date(placedMs + 1))).toBe(true);
    await h.ledger.expireHolds(new Date(placedMs + HOLD_TTL_MS + 1));
    expect(await recordOf(unpublished.id)).toMatchObject({
      hold_status: 'expired',
      outcome: 'refused',
    });
    expect(await recordOf(published.id)).toMatchObject({
      hold_status: 'expired',
      outcome: 'failed',
    });
  });

  it('a pending hold has none', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    expect(await recordOf(hold.id)).toBeUndefined();
    await h.ledger.voidHold(hold.id);
  });
});

describe('reconciliation with the ledger (the invariant check)', () => {
  it('is clean, then names a tampered record and the account sums it breaks', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    await h.ledger.settleHold(hold.id, { inputTokens: 1000, outputTokens: 1000 });
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);

    await h.asOwner(
      'UPDATE usage_records SET cost_micro_dzd = cost_micro_dzd - 1 WHERE hold_id = $1',
      [hold.id],
    );
    const tampered = (await h.ledger.checkInvariants()).violations;
    expect(tampered).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          `each usage record mirrors its final hold: usage record ${hold.id}`,
        ),
        expect.stringContaining(
          `usage costs equal settlements, per account and in total: account ${accountId}`,
        ),
        expect.stringContaining(
          'usage costs equal settlements, per account and in total: all accounts',
        ),
      ]),
    );
    await h.asOwner(
      'UPDATE usage_records SET cost_micro_dzd = cost_micro_dzd + 1 WHERE hold_id = $1',
      [hold.id],
    );
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);
  });

  it('names a final hold whose record is missing', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    await h.ledger.voidHold(hold.id);
    const saved = await recordOf(hold.id);
    await h.asOwner('DELETE FROM usage_records WHERE hold_id = $1', [hold.id]);
    expect((await h.ledger.checkInvariants()).violations).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`every final hold has one usage record: hold ${hold.id}`),
        expect.stringContaining(
          `account ${accountId}: usage records (with purged) cost 0 µDZD over 0`,
        ),
      ]),
    );
    await h.asOwner(
      `INSERT INTO usage_records (hold_id, account_id, model, priority, hold_status, outcome,
                                  cost_micro_dzd, created_at, ended_at)
       SELECT hold_id, account_id, model, priority, hold_status, outcome, cost_micro_dzd,
              created_at, ended_at FROM json_populate_record(NULL::usage_records, $1::json)`,
      [JSON.stringify(saved)],
    );
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);
  });

  it('retention purges old records and keeps the sums exact', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const hold = await admitOne(accountId);
    const settled = await h.ledger.settleHold(hold.id, { inputTokens: 500, outputTokens: 20 });
    const retention = createUsageService({
      store: new UsageStore(pgPoolOf(h.prisma)),
      clock: () => new Date(h.clock.now().getTime() + 401 * 86_400_000),
      retentionDays: 400,
    });
    expect(await retention.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await recordOf(hold.id)).toBeUndefined();
    const { rows } = await pgPoolOf(h.prisma).query<{ cost: string }>(
      'SELECT cost_micro_dzd::text AS cost FROM usage_purged_totals WHERE account_id = $1',
      [accountId],
    );
    expect(BigInt(rows[0]!.cost)).toBe(settled.costMicroDzd);
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);
    // Nothing left that old: a second run purges nothing.
    expect(await retention.purgeExpired()).toBe(0);
  });
});

describe('the usage API over the records', () => {
  it('groups one account by day, model and key with exact sums; others see nothing', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const other = await h.fundedAccount(10n * DZD);
    const day = h.clock.now().toISOString().slice(0, 10);
    const costs: bigint[] = [];
    for (const tokens of [100, 200]) {
      const hold = await admitOne(accountId);
      costs.push(
        (await h.ledger.settleHold(hold.id, { inputTokens: tokens, outputTokens: 10 }))
          .costMicroDzd,
      );
    }
    const range = { from: day, to: new Date(h.clock.now().getTime() + 1).toISOString() };
    const byDay = await usage.summary({ ...range, group_by: 'day' }, { accountId });
    expect(byDay).toEqual({
      object: 'list',
      data: [
        {
          day,
          requests: 2,
          prompt_tokens: 300,
          completion_tokens: 20,
          cost_dzd: Number(costs[0]! + costs[1]!) / 1e6,
          refunded_dzd: 0,
        },
      ],
    });
    const byModel = await usage.summary({ ...range, group_by: 'model' }, { accountId });
    expect(byModel.data).toEqual([expect.objectContaining({ model: MODEL, requests: 2 })]);
    const byKey = await usage.summary({ ...range, group_by: 'key' }, { accountId });
    expect(byKey.data).toEqual([
      expect.objectContaining({ key: API_KEY_NAME, scoped_token_id: null, requests: 2 }),
    ]);
    expect((await usage.summary(range, { accountId: other })).data).toEqual([]);
    // A customer's account cannot be widened by the query string.
    const sneaky = await usage.summary({ ...range, account: accountId }, { accountId: other });
    expect(sneaky.data).toEqual([]);
  });

  // An operator's account × day × model summary is bounded.
  it('refuses a summary with more groups than its bound, naming what to narrow', async () => {
    const accounts = [await h.fundedAccount(10n * DZD), await h.fundedAccount(10n * DZD)];
    for (const accountId of accounts) {
      const hold = await admitOne(accountId);
      await h.ledger.settleHold(hold.id, { inputTokens: 10, outputTokens: 1 });
    }
    const day = h.clock.now().toISOString().slice(0, 10);
    const range = { from: day, to: new Date(h.clock.now().getTime() + 1).toISOString() };
    const bounded = (summaryMaxGroups: number) =>
      createUsageService({
        store: new UsageStore(pgPoolOf(h.prisma)),
        clock: h.clock.now,
        retentionDays: 400,
        summaryMaxGroups,
      });
    const all = await usage.summary({ ...range, group_by: 'day' }, {});
    expect(all.data.length).toBeGreaterThanOrEqual(2);
    const tight = await gatewayErrorOf(
      bounded(all.data.length - 1).summary({ ...range, group_by: 'day' }, {}),
    );
    expect(tight).toMatchObject({ code: 'invalid_request_body', param: 'from' });
    expect(tight.message).toMatch(/more than \d+ groups/);
    const exact = await bounded(all.data.length).summary({ ...range, group_by: 'day' }, {});
    expect(exact.data).toEqual(all.data);
  });

  it('pages the request log newest first with a cursor, never repeating a request', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const ids = await fiveSettledHolds(accountId);
    const range = { to: new Date(h.clock.now().getTime() + 1).toISOString() };
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await usage.log(
        { ...range, limit: '2', ...(cursor ? { cursor } : {}) },
        { accountId },
      );
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((entry) => entry.job_id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual([...ids].reverse());
    const first = (await usage.log({ ...range, limit: '1' }, { accountId })).data[0];
    expect(first).toMatchObject({ job_id: ids[4], prompt_tokens: 14, status: 'succeeded' });
    expect(Object.keys(first!)).not.toContain('account_id');
  });

  it('exports the log as CSV across pages, cut at the row limit with a last line saying so', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const ids = await fiveSettledHolds(accountId);
    const query = { to: new Date(h.clock.now().getTime() + 1).toISOString() };
    const lines = async (maxRows: number) =>
      (await usageLogCsv(usage, query, { accountId }, { maxRows, pageRows: 2 }))
        .trimEnd()
        .split('\r\n');
    const whole = await lines(5);
    expect(whole[0]).toMatch(/^ended_at,created_at,account_id,request_id,job_id,/);
    expect(whole.slice(1).map((line) => line.split(',')[4])).toEqual([...ids].reverse());
    expect(whole[1]).toContain(',14,1,0,');
    const cut = await lines(3);
    expect(cut.slice(1, 4).map((line) => line.split(',')[4])).toEqual(ids.slice(2).reverse());
    expect(cut.slice(4)).toEqual(['# cut at 3 rows']);
  });

  it('refuses bad queries with the parameter named', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ from: 'yesterday' }, 'from'],
      [{ from: '2026-02-30' }, 'from'],
      [{ to: '2026-03-01T10:00:00' }, 'to'],
      [{ from: '2026-03-02', to: '2026-03-01' }, 'from'],
      [{ from: '2025-01-01', to: '2026-03-01' }, 'to'],
      [{ group_by: 'week' }, 'group_by'],
      [{ group_by: ['day', 'model'] }, 'group_by'],
    ];
    for (const [query, param] of cases) {
      const error = await usage.summary(query, { accountId: 'usr_x' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code: 'invalid_request_body', param });
    }
    for (const [query, param] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '501' }, 'limit'],
      [{ cursor: 'nope' }, 'cursor'],
    ] as const) {
      await expect(usage.log(query, { accountId: 'usr_x' })).rejects.toMatchObject({ param });
    }
  });
});
