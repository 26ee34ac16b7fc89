import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Receipt } from '@gateway/contracts';
import { pgPoolOf } from '../db/client.js';
import { gatewayErrorOf } from '../identity/fixtures.suite.js';
import {
  ANY_AMOUNT_MODEL,
  API_KEY_NAME,
  DZD,
  MODEL,
  MODEL_PRICES,
  admitHold,
  createLedgerHarness,
  type LedgerHarness,
} from '../ledger/ledger-test-support.suite.js';
import { usageLogCsv } from '../usage/usage-csv.js';
import { createUsageService, type UsageService } from '../usage/usage-service.js';
import { UsageStore } from '../usage/usage-store.js';
import { ReceiptRepository } from './receipt-repository.js';
import { Receipts } from './receipts.js';

/*
 * A refund shows in the usage record (set with the refund, in its
 * transaction), usage sums report the net cost, the invariant check reconciles refunds with the
 * ledger's reversals (through retention too), and a receipt traces one request to its money:
 * hold, settlement and refund with their ledger entries, found by job id or request id, never
 * another account's.
 */

let h: LedgerHarness;
let usage: UsageService;
let receipts: Receipts;

beforeAll(async () => {
  h = await createLedgerHarness({ holdPublishGraceMs: 30_000 });
  usage = createUsageService({
    store: new UsageStore(pgPoolOf(h.prisma)),
    clock: h.clock.now,
    retentionDays: 400,
  });
  receipts = new Receipts(new ReceiptRepository(pgPoolOf(h.prisma)));
});

afterAll(async () => {
  await h?.finish();
});

const query = <T extends object>(text: string, values: unknown[]) =>
  pgPoolOf(h.prisma)
    .query<T>(text, values)
    .then((result) => result.rows);

/** A settled hold admitted with `requestId` (kept on the hold and its record). */
async function settled(accountId: string, requestId: string, inputTokens = 1000) {
  const hold = await admitHold(h, { accountId, amountMicroDzd: DZD, requestId });
  h.clock.advance(1000);
  const result = await h.ledger.settleHold(hold.id, {
    inputTokens,
    outputTokens: 100,
    reasoningTokens: 7,
    startedAtMs: h.clock.now().getTime() - 400,
    generationMs: 300,
  });
  return { holdId: hold.id, costMicroDzd: result.costMicroDzd };
}

/** The ledger's own view: each transaction of the hold (settlement or refund) with its entries. */
async function ledgerOf(holdId: string) {
  const rows = await query<{ id: string; kind: string; entry_ids: string[]; customer: string }>(
    `SELECT t.id, t.kind::text AS kind, array_agg(e.id::text ORDER BY e.id) AS entry_ids,
            SUM(e.amount_micro_dzd) FILTER (WHERE e.account_id IS NOT NULL)::text AS customer
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.hold_id = $1 OR t.reference LIKE 'refund of hold ' || $1 || ' (%'
      GROUP BY t.id, t.kind`,
    [holdId],
  );
  return {
    settlement: rows.find((row) => row.kind === 'hold_settlement')!,
    refund: rows.find((row) => row.kind === 'reversal'),
  };
}

describe('refunds in usage records', () => {
  it('are set with the refund: the record, the sums, the log and the CSV show the net cost', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const kept = await settled(accountId, 'req-kept', 2000);
    const lost = await settled(accountId, 'req-lost', 1000);
    const refund = await h.ledger.refundHold(lost.holdId);
    expect(refund.refundedMicroDzd).toBe(lost.costMicroDzd);

    const [record] = await query<{ cost: string; refunded: string; txn: string; at: Date }>(
      `SELECT cost_micro_dzd::text AS cost, refunded_micro_dzd::text AS refunded,
              refund_transaction_id AS txn, refunded_at AS at
         FROM usage_records WHERE hold_id = $1`,
      [lost.holdId],
    );
    const { refund: reversal } = await ledgerOf(lost.holdId);
    expect(record).toEqual({
      cost: String(lost.costMicroDzd),
      refunded: String(lost.costMicroDzd),
      txn: reversal!.id,
      at: h.clock.now(),
    });

    const range = { to: new Date(h.clock.now().getTime() + 1).toISOString() };
    const sums = await usage.summary({ ...range, group_by: 'model' }, { accountId });
    expect(sums.data).toEqual([
      expect.objectContaining({
        requests: 2,
        cost_dzd: Number(kept.costMicroDzd) / 1e6,
        refunded_dzd: Number(lost.costMicroDzd) / 1e6,
      }),
    ]);
    const log = await usage.log(range, { accountId });
    expect(
      log.data.map(({ job_id, cost_dzd, refunded_dzd }) => [job_id, cost_dzd, refunded_dzd]),
    ).toEqual([
      [lost.holdId, 0, Number(lost.costMicroDzd) / 1e6],
      [kept.holdId, Number(kept.costMicroDzd) / 1e6, 0],
    ]);
    const csv = (await usageLogCsv(usage, range, { accountId })).trimEnd().split('\r\n');
    expect(csv[0]).toMatch(/,generation_latency_ms,refunded_dzd$/);
    expect(csv[1]).toMatch(
      new RegExp(`,${lost.holdId},.*,0,succeeded,.*,${Number(lost.costMicroDzd) / 1e6}$`),
    );
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);
  });

  it('reconcile with the refund reversals: a tampered refund is named, retention keeps the sums', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const lost = await settled(accountId, 'req-tamper');
    await h.ledger.refundHold(lost.holdId);
    await h.asOwner('UPDATE usage_records SET refunded_micro_dzd = 0 WHERE hold_id = $1', [
      lost.holdId,
    ]);
    expect((await h.ledger.checkInvariants()).violations).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          `each usage record mirrors its final hold: usage record ${lost.holdId}`,
        ),
        expect.stringContaining(
          `usage refunds equal refund reversals, per account: account ${accountId}: usage records (with purged) refunded 0 µDZD`,
        ),
      ]),
    );
    await h.asOwner(
      'UPDATE usage_records SET refunded_micro_dzd = cost_micro_dzd WHERE hold_id = $1',
      [lost.holdId],
    );
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);

    const later = createUsageService({
      store: new UsageStore(pgPoolOf(h.prisma)),
      clock: () => new Date(h.clock.now().getTime() + 401 * 86_400_000),
      retentionDays: 400,
    });
    expect(await later.purgeExpired()).toBeGreaterThanOrEqual(1);
    const [purged] = await query<{ refunded: string }>(
      'SELECT refunded_micro_dzd::text AS refunded FROM usage_purged_totals WHERE account_id = $1',
      [accountId],
    );
    expect(BigInt(purged!.refunded)).toBe(lost.costMicroDzd);
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);
  });
});

describe('receipts', () => {
  it('trace a refunded request to its hold, settlement, refund and ledger entries', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const lost = await settled(accountId, 'req-receipt', 1500);
    await h.ledger.refundHold(lost.holdId);
    const ledger = await ledgerOf(lost.holdId);
    const receipt = await receipts.get(accountId, lost.holdId);
    const cost = Number(lost.costMicroDzd) / 1e6;
    expect(receipt).toEqual({
      object: 'receipt',
      request_id: 'req-receipt',
      job_id: lost.holdId,
      hold_id: lost.holdId,
      model: MODEL,
      endpoint: null,
      key: API_KEY_NAME,
      scoped_token_id: null,
      priority: false,
      status: 'succeeded',
      hold_status: 'settled',
      tokens: { prompt: 1500, completion: 100, reasoning: 7 },
      price_per_million: {
        input_dzd: Number(MODEL_PRICES.input) / 1e6,
        output_dzd: Number(MODEL_PRICES.output) / 1e6,
      },
      hold_dzd: 1,
      settled_dzd: cost,
      refunded_dzd: cost,
      net_dzd: 0,
      hold_micro_dzd: String(DZD),
      settled_micro_dzd: String(lost.costMicroDzd),
      refunded_micro_dzd: String(lost.costMicroDzd),
      net_micro_dzd: '0',
      ledger: {
        settlement_transaction_id: ledger.settlement.id,
        settlement_entry_ids: ledger.settlement.entry_ids,
        refund_transaction_id: ledger.refund!.id,
        refund_entry_ids: ledger.refund!.entry_ids,
      },
      timings: {
        created_at: new Date(h.clock.now().getTime() - 1000).toISOString(),
        ended_at: h.clock.now().toISOString(),
        refunded_at: h.clock.now().toISOString(),
        queue_latency_ms: 600,
        generation_latency_ms: 300,
      },
    } satisfies Receipt);
    // The money: settled = what the ledger charged, refunded = what the reversal gave back.
    expect(-BigInt(ledger.settlement.customer)).toBe(lost.costMicroDzd);
    expect(BigInt(ledger.refund!.customer)).toBe(lost.costMicroDzd);
    // By the request id too; operators see the account.
    expect(await receipts.get(accountId, 'req-receipt')).toEqual(receipt);
    expect(await receipts.get(accountId, 'req-receipt', true)).toEqual({
      ...receipt,
      account_id: accountId,
    });
  });

  it('show a running request as pending, and the newest request of a reused request id', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const first = await settled(accountId, 'req-reused');
    // At priority only a model this cheap reserves exactly 1 DZD for some prompt.
    const running = await admitHold(h, {
      accountId,
      amountMicroDzd: DZD,
      model: ANY_AMOUNT_MODEL,
      priority: true,
    });
    expect(await receipts.get(accountId, running.id)).toMatchObject({
      status: 'pending',
      hold_status: 'pending',
      settled_dzd: null,
      settled_micro_dzd: null,
      net_micro_dzd: '0',
      hold_micro_dzd: String(DZD),
      tokens: { prompt: 0, completion: 0, reasoning: 0 },
      ledger: { settlement_transaction_id: null, refund_transaction_id: null },
      timings: { ended_at: null, queue_latency_ms: null },
    });
    expect((await receipts.get(accountId, 'req-reused')).job_id).toBe(first.holdId);
    h.clock.advance(1000);
    await h.asOwner('UPDATE holds SET request_id = $2 WHERE id = $1', [running.id, 'req-reused']);
    expect((await receipts.get(accountId, 'req-reused')).job_id).toBe(running.id);
    await h.ledger.voidHold(running.id, { outcome: 'cancelled' });
    const voided = await receipts.get(accountId, running.id);
    expect(voided).toMatchObject({ status: 'cancelled', hold_status: 'voided', net_dzd: 0 });
    expect(voided.settled_micro_dzd).toBe('0');
  });

  it("are 404 for an unknown id, a malformed one and another account's request", async () => {
    const owner = await h.fundedAccount(10n * DZD);
    const other = await h.fundedAccount(10n * DZD);
    const mine = await settled(owner, 'req-private');
    for (const [accountId, id] of [
      [other, mine.holdId],
      [other, 'req-private'],
      [owner, 'req-nobody'],
      [owner, 'bad/id'],
    ] as const) {
      const error = await gatewayErrorOf(receipts.get(accountId, id));
      expect({ id, code: error.code }).toEqual({ id, code: 'resource_not_found' });
    }
  });
});
