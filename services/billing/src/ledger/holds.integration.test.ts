import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { REFUND_WINDOW_MS } from './refunds.js';
import type { HoldConflictResult, HoldStatus } from './types.js';
import {
  ANY_AMOUNT_MODEL,
  DZD,
  HOLD_TTL_MS,
  MODEL_PRICES,
  admitHold,
  admittableEstimate,
  createLedgerHarness,
  expectedCost,
  type AdmitHoldInput,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

let h: LedgerHarness;
const admit = (input: AdmitHoldInput) => admitHold(h, input);

beforeAll(async () => {
  h = await createLedgerHarness({ maxConnections: 8 });
});

afterAll(async () => {
  await h?.finish();
});

/** Every caught error is returned as a value, so each row can state its expected outcome. */
async function outcome<T>(run: () => Promise<T>): Promise<T | GatewayError> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

type Op =
  | { op: 'settle'; inputTokens: number; outputTokens: number }
  | { op: 'void' }
  | { op: 'sweep'; afterMs: number }
  | { op: 'settleUnknown' }
  | { op: 'voidUnknown' };

type Expected =
  | { ok: { status: HoldStatus; costMicroDzd?: bigint; releasedMicroDzd?: bigint } }
  | { sameAsPrevious: true }
  | { swept: number }
  | { error: string; result?: HoldConflictResult; message?: RegExp };

interface Row {
  name: string;
  priority?: boolean;
  before: Op[];
  op: Op;
  expected: Expected;
  /** The hold's state after the operation, and the account's pending and posted debits. */
  after: { status: HoldStatus; pending: bigint; debits: bigint };
}

const HELD = 1n * DZD;
const FUNDED = 10n * DZD;
const usage = { inputTokens: 1000, outputTokens: 500 };
const usageCost = expectedCost(1000n, 500n); // 2000 + 3000 µDZD
const settle = { op: 'settle', ...usage } as const;
const hugeSettle = { op: 'settle', inputTokens: 1_000_000, outputTokens: 1_000_000 } as const;

const ROWS: Row[] = [
  {
    name: 'settle a pending hold → settled for the usage cost, the rest released',
    before: [],
    op: settle,
    expected: {
      ok: { status: 'settled', costMicroDzd: usageCost, releasedMicroDzd: HELD - usageCost },
    },
    after: { status: 'settled', pending: 0n, debits: usageCost },
  },
  {
    name: 'settle twice → the same result, charged once',
    before: [settle],
    op: settle,
    expected: { sameAsPrevious: true },
    after: { status: 'settled', pending: 0n, debits: usageCost },
  },
  {
    name: 'settle twice with different usage → the first settlement stands',
    before: [settle],
    op: hugeSettle,
    expected: { sameAsPrevious: true },
    after: { status: 'settled', pending: 0n, debits: usageCost },
  },
  {
    name: 'settle above the hold → capped at the held amount',
    before: [],
    op: hugeSettle,
    expected: { ok: { status: 'settled', costMicroDzd: HELD, releasedMicroDzd: 0n } },
    after: { status: 'settled', pending: 0n, debits: HELD },
  },
  {
    name: 'settle with no usage → settled for 0, everything released',
    before: [],
    op: { op: 'settle', inputTokens: 0, outputTokens: 0 },
    expected: { ok: { status: 'settled', costMicroDzd: 0n, releasedMicroDzd: HELD } },
    after: { status: 'settled', pending: 0n, debits: 0n },
  },
  {
    name: 'settle a priority hold → +20%, rounded up',
    priority: true,
    before: [],
    op: { op: 'settle', inputTokens: 7, outputTokens: 3 },
    expected: { ok: { status: 'settled', costMicroDzd: expectedCost(7n, 3n, true) } },
    after: { status: 'settled', pending: 0n, debits: expectedCost(7n, 3n, true) },
  },
  {
    name: 'settle a hold past its expiry the sweeper has not reached → settled',
    before: [{ op: 'sweep', afterMs: HOLD_TTL_MS - 1 }],
    op: settle,
    expected: { ok: { status: 'settled', costMicroDzd: usageCost } },
    after: { status: 'settled', pending: 0n, debits: usageCost },
  },
  {
    name: 'void a pending hold → voided, all released',
    before: [],
    op: { op: 'void' },
    expected: { ok: { status: 'voided', releasedMicroDzd: HELD } },
    after: { status: 'voided', pending: 0n, debits: 0n },
  },
  {
    name: 'void twice → the same result',
    before: [{ op: 'void' }],
    op: { op: 'void' },
    expected: { sameAsPrevious: true },
    after: { status: 'voided', pending: 0n, debits: 0n },
  },
  {
    name: 'void after settle → conflict',
    before: [settle],
    op: { op: 'void' },
    expected: { error: 'conflict', result: 'hold_settled', message: /was settled at .*voided/ },
    after: { status: 'settled', pending: 0n, debits: usageCost },
  },
  {
    name: 'settle after void → conflict',
    before: [{ op: 'void' }],
    op: settle,
    expected: { error: 'conflict', result: 'hold_voided', message: /was voided at .*settled/ },
    after: { status: 'voided', pending: 0n, debits: 0n },
  },
  {
    name: 'expire then settle → conflict',
    before: [{ op: 'sweep', afterMs: HOLD_TTL_MS }],
    op: settle,
    expected: { error: 'conflict', result: 'hold_expired', message: /expired at .*settled/ },
    after: { status: 'expired', pending: 0n, debits: 0n },
  },
  {
    name: 'expire then void → no-op, reports expired',
    before: [{ op: 'sweep', afterMs: HOLD_TTL_MS }],
    op: { op: 'void' },
    expected: { ok: { status: 'expired', releasedMicroDzd: HELD } },
    after: { status: 'expired', pending: 0n, debits: 0n },
  },
  {
    name: 'sweep before expiry → nothing expires',
    before: [],
    op: { op: 'sweep', afterMs: HOLD_TTL_MS - 1 },
    expected: { swept: 0 },
    after: { status: 'pending', pending: HELD, debits: 0n },
  },
  {
    name: 'sweep at expiry → expired, released',
    before: [],
    op: { op: 'sweep', afterMs: HOLD_TTL_MS },
    expected: { swept: 1 },
    after: { status: 'expired', pending: 0n, debits: 0n },
  },
  {
    name: 'sweep after settle → nothing to expire',
    before: [settle],
    op: { op: 'sweep', afterMs: 10 * HOLD_TTL_MS },
    expected: { swept: 0 },
    after: { status: 'settled', pending: 0n, debits: usageCost },
  },
  {
    name: 'settle an unknown hold → resource_not_found',
    before: [],
    op: { op: 'settleUnknown' },
    expected: { error: 'resource_not_found', message: /does not exist/ },
    after: { status: 'pending', pending: HELD, debits: 0n },
  },
  {
    name: 'void an unknown hold → resource_not_found',
    before: [],
    op: { op: 'voidUnknown' },
    expected: { error: 'resource_not_found' },
    after: { status: 'pending', pending: HELD, debits: 0n },
  },
  {
    name: 'settle with a negative token count → invalid_request_body',
    before: [],
    op: { op: 'settle', inputTokens: -1, outputTokens: 0 },
    expected: { error: 'invalid_request_body' },
    after: { status: 'pending', pending: HELD, debits: 0n },
  },
];

describe('hold state machine', () => {
  it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const accountId = await h.fundedAccount(FUNDED);
    const priority = row.priority ?? false;
    // No prompt's priority worst case at MODEL's prices is exactly 1 DZD: the nearest below.
    const held = priority ? admittableEstimate(HELD, true).amountMicroDzd : HELD;
    const hold = await admit({ accountId, amountMicroDzd: held, priority });
    const sweepBase = h.clock.now().getTime();
    const run = (op: Op) =>
      outcome(async (): Promise<unknown> => {
        switch (op.op) {
          case 'settle':
            return h.ledger.settleHold(hold.id, op);
          case 'void':
            return h.ledger.voidHold(hold.id);
          case 'sweep':
            // Other rows' holds are swept too; count only this one.
            await h.ledger.expireHolds(new Date(sweepBase + op.afterMs));
            return (await h.ledger.getHold(hold.id))?.status === 'expired' ? 1 : 0;
          case 'settleUnknown':
            return h.ledger.settleHold('hold_unknown', usage);
          case 'voidUnknown':
            return h.ledger.voidHold('hold_unknown');
        }
      });

    let previous: unknown;
    for (const op of row.before) previous = await run(op);
    const result = await run(row.op);

    const { expected } = row;
    if ('error' in expected) {
      expect(result).toBeInstanceOf(GatewayError);
      const error = result as GatewayError;
      expect(error.code).toBe(expected.error);
      if (expected.result) expect(error.details?.result).toBe(expected.result);
      if (expected.message) expect(error.message).toMatch(expected.message);
    } else if ('sameAsPrevious' in expected) {
      expect(result).toEqual({ ...(previous as object), replayed: true });
    } else if ('swept' in expected) {
      expect(result).toBe(expected.swept);
    } else {
      expect(result).not.toBeInstanceOf(GatewayError);
      expect(result).toMatchObject({ holdId: hold.id, ...expected.ok });
    }

    const after = await h.ledger.getHold(hold.id);
    expect(after?.status).toBe(row.after.status);
    const balance = await h.ledger.getBalance(accountId);
    expect(balance.pendingMicroDzd).toBe(row.after.pending);
    expect(balance.postedDebitsMicroDzd).toBe(row.after.debits);
    expect(balance.availableMicroDzd).toBe(FUNDED - row.after.debits - row.after.pending);
  });
});

describe('admitting a hold', () => {
  it('refuses a hold above the available balance without revealing internals', async () => {
    const accountId = await h.fundedAccount(1n * DZD);
    const error = await outcome(() =>
      admit({ accountId, amountMicroDzd: DZD + 1n, model: ANY_AMOUNT_MODEL }),
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('insufficient_balance');
    expect((error as GatewayError).message).not.toMatch(/account_balances|constraint|\d/);
    expect(await h.prisma.hold.count({ where: { accountId } })).toBe(0);
  });

  it('refuses any hold, even of 0, on a zero balance and on an account never credited', async () => {
    const spent = await h.fundedAccount(1n * DZD);
    await admit({ accountId: spent, amountMicroDzd: DZD });
    const never = await h.createAccount();
    for (const accountId of [spent, never]) {
      await expect(admit({ accountId, amountMicroDzd: 0n })).rejects.toMatchObject({
        code: 'insufficient_balance',
      });
    }
  });

  it('enforces the scoped token spending limit, showing spent and limit in DZD', async () => {
    const accountId = await h.fundedAccount(100n * DZD);
    const tokenId = await h.createToken(accountId, 2n * DZD);
    const first = await admit({ accountId, amountMicroDzd: 1_500_000n, tokenId });
    // 1.5 DZD reserved: another 1 DZD would exceed the 2 DZD limit.
    await expect(admit({ accountId, amountMicroDzd: DZD, tokenId })).rejects.toMatchObject({
      code: 'budget_exhausted',
      message: expect.stringMatching(/spent 0 DZD of 2 DZD.*1\.5 DZD more is reserved/),
    });
    // Settle 1.5 DZD of usage, the whole hold: now the token has spent 1.5 of 2 DZD.
    await h.ledger.settleHold(first.id, { inputTokens: 750_000, outputTokens: 0 });
    const token = await h.prisma.scopedToken.findUniqueOrThrow({ where: { id: tokenId } });
    expect(token.spentMicroDzd).toBe(1_500_000n);
    expect(token.reservedMicroDzd).toBe(0n);
    // Exactly the remainder fits; then the budget is exhausted.
    const rest = await admit({ accountId, amountMicroDzd: 500_000n, tokenId });
    await h.ledger.settleHold(rest.id, { inputTokens: 250_000, outputTokens: 0 });
    await expect(admit({ accountId, amountMicroDzd: 0n, tokenId })).rejects.toMatchObject({
      code: 'budget_exhausted',
      message: 'Scoped token budget exhausted: spent 2 DZD of its 2 DZD spending limit.',
    });
  });

  it('checks the spending limit before the balance (the spec’s order)', async () => {
    const accountId = await h.fundedAccount(1n * DZD);
    const tokenId = await h.createToken(accountId, 1n);
    await expect(admit({ accountId, amountMicroDzd: 5n * DZD, tokenId })).rejects.toMatchObject({
      code: 'budget_exhausted',
    });
  });

  it('is idempotent on a caller-chosen hold id', async () => {
    const accountId = await h.fundedAccount(3n * DZD);
    const input = { holdId: `hold_req_${accountId}`, accountId, amountMicroDzd: 2n * DZD };
    const first = await admit(input);
    const again = await admit(input);
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ ...first, replayed: true });
    expect((await h.ledger.getBalance(accountId)).pendingMicroDzd).toBe(2n * DZD);
    // A retry of admission (same job id, same account) gets the first hold back whatever it
    // estimates now: nothing is reserved twice.
    const retried = await admit({ ...input, amountMicroDzd: DZD });
    expect(retried).toEqual({ ...first, replayed: true });
    expect((await h.ledger.getBalance(accountId)).pendingMicroDzd).toBe(2n * DZD);
    const other = await h.fundedAccount(3n * DZD);
    await expect(admit({ ...input, accountId: other })).rejects.toMatchObject({
      code: 'conflict',
      details: { result: 'hold_id_taken' },
    });
    expect((await h.ledger.getBalance(other)).pendingMicroDzd).toBe(0n);
  });

  it('a refusal writes nothing: the next admission reserves as if it never happened', async () => {
    const accountId = await h.fundedAccount(2n * DZD);
    await expect(admit({ accountId, amountMicroDzd: 3n * DZD })).rejects.toMatchObject({
      code: 'insufficient_balance',
    });
    expect(await h.prisma.hold.count({ where: { accountId } })).toBe(0);
    await admit({ accountId, amountMicroDzd: DZD });
    expect((await h.ledger.getBalance(accountId)).pendingMicroDzd).toBe(DZD);
  });

  it('refuses a hold for a scoped token that is not registered to the account', async () => {
    const accountId = await h.fundedAccount(2n * DZD);
    const otherAccount = await h.createAccount();
    // Signed by this account's key, registered to another account (both keys have one name).
    const tokenId = await h.createToken(accountId, null);
    await h.asOwner('UPDATE scoped_tokens SET account_id = $2 WHERE id = $1', [
      tokenId,
      otherAccount,
    ]);
    await expect(
      admit({ accountId, amountMicroDzd: 1n, model: ANY_AMOUNT_MODEL, tokenId }),
    ).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect(await h.prisma.hold.count({ where: { accountId } })).toBe(0);
  });

  it('cannot settle a hold whose model left the catalog; it expires uncharged', async () => {
    const accountId = await h.fundedAccount(2n * DZD);
    await h.prisma.model.create({
      data: {
        id: 'gone/model',
        kind: 'chat',
        provider: 'node',
        upstreamModel: 'gone',
        inputPriceMicroDzdPerM: MODEL_PRICES.input,
        outputPriceMicroDzdPerM: MODEL_PRICES.output,
        maxOutputTokens: 4096,
      },
    });
    const hold = await admit({ accountId, amountMicroDzd: DZD, model: 'gone/model' });
    // A hold of a previous release (no price snapshot) whose model the owner then removed.
    await h.asOwner(
      `UPDATE holds SET input_price_micro_dzd_per_m = NULL, output_price_micro_dzd_per_m = NULL
        WHERE id = $1`,
      [hold.id],
    );
    await h.asOwner('DELETE FROM models WHERE id = $1', ['gone/model']);
    await expect(h.ledger.settleHold(hold.id, usage)).rejects.toMatchObject({
      code: 'resource_not_found',
      message: expect.stringMatching(/gone\/model .* no longer in the catalog/),
    });
    expect((await h.ledger.voidHold(hold.id)).status).toBe('voided');
  });
});

/**
 * A settled answer delivered to nobody is refunded — once, with a reversal
 * transaction (the settlement stays: the ledger is append-only), the scoped token's spend given
 * back, and nothing for a hold that charged nothing. The invariant check runs in finish().
 */
describe('refundHold', () => {
  it('gives a settled charge back once, with a reversal transaction, and the token its spend', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const scopedTokenId = await h.createToken(accountId, 2n * DZD);
    const hold = await admit({ accountId, tokenId: scopedTokenId, amountMicroDzd: DZD });
    const settled = await h.ledger.settleHold(hold.id, { inputTokens: 1_000, outputTokens: 500 });
    expect(settled.costMicroDzd).toBe(expectedCost(1_000n, 500n));
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(
      5n * DZD - settled.costMicroDzd,
    );

    const refund = await h.ledger.refundHold(hold.id);
    expect(refund).toEqual({
      holdId: hold.id,
      status: 'refunded',
      refundedMicroDzd: settled.costMicroDzd,
      replayed: false,
    });
    const again = await h.ledger.refundHold(hold.id);
    expect(again).toMatchObject({ status: 'refunded', replayed: true });
    const balance = await h.ledger.getBalance(accountId);
    expect(balance.balanceMicroDzd).toBe(5n * DZD);
    expect(balance.availableMicroDzd).toBe(5n * DZD);
    expect(
      (await h.prisma.scopedToken.findUniqueOrThrow({ where: { id: scopedTokenId } }))
        .spentMicroDzd,
    ).toBe(0n);
    // The settlement stays on the hold; a later settle is a replay, never a second charge.
    expect((await h.ledger.getHold(hold.id))?.status).toBe('settled');
    expect(
      (await h.ledger.settleHold(hold.id, { inputTokens: 1_000, outputTokens: 500 })).replayed,
    ).toBe(true);
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(5n * DZD);
    const kinds = await h.prisma.ledgerTransaction.findMany({
      where: { accountId },
      select: { kind: true },
      orderBy: { createdAt: 'asc' },
    });
    expect(kinds.map((t) => t.kind).sort()).toEqual(['credit', 'hold_settlement', 'reversal']);
  });

  it('moves nothing for a hold that charged nothing (pending or voided)', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const hold = await admit({ accountId, amountMicroDzd: DZD });
    expect(await h.ledger.refundHold(hold.id)).toMatchObject({
      status: 'not_settled',
      refundedMicroDzd: 0n,
    });
    await h.ledger.voidHold(hold.id);
    expect(await h.ledger.refundHold(hold.id)).toMatchObject({ status: 'not_settled' });
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(5n * DZD);
    await expect(h.ledger.refundHold('hold-unknown')).rejects.toMatchObject({
      code: 'resource_not_found',
    });
  });

  // A refund credential (edge's, the worker's) reaches recent settlements only.
  it('refuses a refund more than REFUND_WINDOW_MS after the settlement', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const place = () => admit({ accountId, amountMicroDzd: DZD });
    const old = await place();
    await h.ledger.settleHold(old.id, { inputTokens: 1_000, outputTokens: 500 });
    h.clock.advance(REFUND_WINDOW_MS + 1_000);
    const recent = await place();
    await h.ledger.settleHold(recent.id, { inputTokens: 1_000, outputTokens: 500 });
    await expect(h.ledger.refundHold(old.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(await h.ledger.refundHold(recent.id)).toMatchObject({ status: 'refunded' });
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(
      5n * DZD - expectedCost(1_000n, 500n),
    );
  });
});

describe('credit', () => {
  it('validates its input and the account', async () => {
    const accountId = await h.createAccount();
    await expect(
      h.ledger.credit({ accountId, amountMicroDzd: 0n, reference: null }),
    ).rejects.toMatchObject({ code: 'invalid_request_body', param: 'amountMicroDzd' });
    await expect(
      h.ledger.credit({ accountId: 'usr_missing', amountMicroDzd: 1n, reference: null }),
    ).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(h.ledger.getBalance('usr_missing')).rejects.toMatchObject({
      code: 'resource_not_found',
    });
    expect(await h.ledger.getBalance(accountId)).toEqual({
      postedCreditsMicroDzd: 0n,
      postedDebitsMicroDzd: 0n,
      pendingMicroDzd: 0n,
      balanceMicroDzd: 0n,
      availableMicroDzd: 0n,
    });
  });

  it('posts a balanced funding → customer transaction', async () => {
    const accountId = await h.createAccount();
    const result = await h.ledger.credit({
      accountId,
      amountMicroDzd: 12_500_000n,
      reference: 'wire 42',
    });
    expect(result.balance).toEqual({
      postedCreditsMicroDzd: 12_500_000n,
      postedDebitsMicroDzd: 0n,
      pendingMicroDzd: 0n,
      balanceMicroDzd: 12_500_000n,
      availableMicroDzd: 12_500_000n,
    });
    const entries = await h.prisma.ledgerEntry.findMany({
      where: { transactionId: result.transactionId },
      orderBy: { id: 'asc' },
    });
    expect(entries.map((e) => [e.ledgerAccount, e.amountMicroDzd])).toEqual([
      ['system:funding', -12_500_000n],
      [`customer:${accountId}`, 12_500_000n],
    ]);
  });

  it('replays the first answer for the same key and refuses it with another body', async () => {
    const accountId = await h.createAccount();
    const input = { accountId, amountMicroDzd: DZD, reference: 'r', idempotencyKey: 'k-1' };
    const first = await h.ledger.credit(input);
    await h.ledger.credit({ ...input, idempotencyKey: 'k-2' });
    expect(await h.ledger.credit(input)).toEqual(first);
    await expect(h.ledger.credit({ ...input, amountMicroDzd: 2n * DZD })).rejects.toMatchObject({
      code: 'idempotency_key_conflict',
    });
    await expect(h.ledger.credit({ ...input, reference: 'other' })).rejects.toMatchObject({
      code: 'idempotency_key_conflict',
    });
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(2n * DZD);
    // After 24 h the key is forgotten: the same key credits again.
    h.clock.advance(24 * 60 * 60 * 1000);
    const later = await h.ledger.credit(input);
    expect(later.transactionId).not.toBe(first.transactionId);
    expect(later.balance.balanceMicroDzd).toBe(3n * DZD);
  });
});

describe('openHolds', () => {
  it("lists the account's pending holds oldest first, up to the limit, with the reserved total", async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const first = await admit({ accountId, amountMicroDzd: DZD, model: ANY_AMOUNT_MODEL });
    h.clock.advance(1_000);
    const second = await admit({ accountId, amountMicroDzd: 2n * DZD, model: ANY_AMOUNT_MODEL });
    h.clock.advance(1_000);
    const settled = await admit({ accountId, amountMicroDzd: DZD, model: ANY_AMOUNT_MODEL });
    await h.ledger.settleHold(settled.id, { inputTokens: 1, outputTokens: 0 });
    await h.markPublished(second.id, new Date(h.clock.now().getTime() + HOLD_TTL_MS));

    const all = await h.ledger.openHolds(accountId, 10);
    expect(
      all.holds.map((hold) => [hold.id, hold.amountMicroDzd, hold.publishedAt !== null]),
    ).toEqual([
      [first.id, DZD, false],
      [second.id, 2n * DZD, true],
    ]);
    expect(all).toMatchObject({ hasMore: false, reservedMicroDzd: 3n * DZD });

    const oldest = await h.ledger.openHolds(accountId, 1);
    expect(oldest.holds.map((hold) => hold.id)).toEqual([first.id]);
    expect(oldest).toMatchObject({ hasMore: true, reservedMicroDzd: 3n * DZD });
  });

  it('is empty for an account with nothing reserved, and 404 for an unknown one', async () => {
    const accountId = await h.createAccount();
    expect(await h.ledger.openHolds(accountId, 10)).toEqual({
      holds: [],
      hasMore: false,
      reservedMicroDzd: 0n,
    });
    await expect(h.ledger.openHolds('acct_unknown', 10)).rejects.toMatchObject({
      code: 'resource_not_found',
    });
  });
});
