/**
 * Property-based test: random sequences of credit / hold / settle / void / expire run against
 * the ledger and against an in-memory model of balances, holds and token counters. Every
 * operation's outcome must match the model's, and after each sequence the database's balances
 * and token counters must equal the model's and checkInvariants() must report nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { GatewayError } from '@gateway/contracts';
import {
  HOLD_TTL_MS,
  admitHold,
  admittableEstimate,
  createLedgerHarness,
  expectedCost,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

const QUARTER = 250_000n; // 0.25 DZD
const ACCOUNTS = 3;

type Op =
  | { kind: 'credit'; account: number; amount: bigint }
  | {
      kind: 'hold';
      account: number;
      /** 'rest': exactly the model's available balance, so balances often reach zero. */
      amount: bigint | 'rest';
      priority: boolean;
      withToken: boolean;
    }
  | { kind: 'settle'; hold: number; inputTokens: number; outputTokens: number }
  | { kind: 'void'; hold: number }
  | { kind: 'expire'; advanceMs: number };

const quarters = (max: number) => fc.integer({ min: 0, max }).map((n) => BigInt(n) * QUARTER);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('credit' as const),
      account: fc.nat(ACCOUNTS - 1),
      amount: fc.oneof(
        quarters(8).map((a) => a + QUARTER),
        fc.bigInt(1n, 3n * QUARTER),
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('hold' as const),
      account: fc.nat(ACCOUNTS - 1),
      amount: fc.oneof({ weight: 3, arbitrary: quarters(6) }, fc.constant('rest' as const)),
      priority: fc.boolean(),
      withToken: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      hold: fc.nat(),
      inputTokens: fc.nat(600_000),
      outputTokens: fc.nat(300_000),
    }),
  },
  fc.record({ kind: fc.constant('void' as const), hold: fc.nat() }),
  fc.record({
    kind: fc.constant('expire' as const),
    advanceMs: fc.integer({ min: 0, max: HOLD_TTL_MS }),
  }),
);

const scenarioArb = fc.record({
  tokenLimits: fc.array(fc.option(quarters(12), { nil: null }), {
    minLength: ACCOUNTS,
    maxLength: ACCOUNTS,
  }),
  initialCredits: fc.array(quarters(8), { minLength: ACCOUNTS, maxLength: ACCOUNTS }),
  ops: fc.array(opArb, { minLength: 1, maxLength: 40 }),
});

interface ModelAccount {
  id: string;
  credits: bigint;
  debits: bigint;
  pending: bigint;
  token: { id: string; limit: bigint | null; spent: bigint; reserved: bigint };
}

interface ModelHold {
  id: string;
  account: ModelAccount;
  amount: bigint;
  priority: boolean;
  withToken: boolean;
  status: 'pending' | 'settled' | 'voided' | 'expired';
  settled: bigint;
  expiresAt: number;
}

/** What an operation returned, reduced to what the model predicts. */
type Outcome = { ok: string } | { error: string };

async function observe(run: () => Promise<string>): Promise<Outcome> {
  try {
    return { ok: await run() };
  } catch (error) {
    if (error instanceof GatewayError) return { error: error.code };
    throw error;
  }
}

let h: LedgerHarness;

beforeAll(async () => {
  h = await createLedgerHarness({ maxConnections: 4 });
});

afterAll(async () => {
  await h?.finish();
});

describe('ledger against an in-memory model', () => {
  it('agrees on every outcome and on every balance', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ tokenLimits, initialCredits, ops }) => {
        const accounts: ModelAccount[] = [];
        for (let i = 0; i < ACCOUNTS; i += 1) {
          const id = await h.createAccount(`model ${i}`);
          const limit = tokenLimits[i] ?? null;
          const tokenId = await h.createToken(id, limit);
          accounts.push({
            id,
            credits: 0n,
            debits: 0n,
            pending: 0n,
            token: { id: tokenId, limit, spent: 0n, reserved: 0n },
          });
        }
        const holds: ModelHold[] = [];
        for (const [index, amount] of initialCredits.entries()) {
          const account = accounts[index]!;
          if (amount === 0n) continue;
          await h.ledger.credit({ accountId: account.id, amountMicroDzd: amount, reference: null });
          account.credits += amount;
        }

        for (const op of ops) {
          let expected: Outcome;
          let actual: Outcome;
          switch (op.kind) {
            case 'credit': {
              const account = accounts[op.account]!;
              account.credits += op.amount;
              expected = { ok: 'credited' };
              actual = await observe(async () => {
                await h.ledger.credit({
                  accountId: account.id,
                  amountMicroDzd: op.amount,
                  reference: null,
                });
                return 'credited';
              });
              break;
            }
            case 'hold': {
              const account = accounts[op.account]!;
              const { token } = account;
              const available = account.credits - account.debits - account.pending;
              // What an admission can reserve at MODEL's prices: the amount itself, or (an odd
              // amount, most at priority) the nearest below it.
              const amount = admittableEstimate(
                op.amount === 'rest' ? available : op.amount,
                op.priority,
              ).amountMicroDzd;
              if (
                op.withToken &&
                token.limit !== null &&
                (token.spent >= token.limit || token.spent + token.reserved + amount > token.limit)
              ) {
                expected = { error: 'budget_exhausted' };
              } else if (available <= 0n || available < amount) {
                expected = { error: 'insufficient_balance' };
              } else {
                expected = { ok: 'pending' };
              }
              actual = await observe(async () => {
                const hold = await admitHold(h, {
                  accountId: account.id,
                  amountMicroDzd: amount,
                  priority: op.priority,
                  ...(op.withToken ? { tokenId: token.id } : {}),
                });
                holds.push({
                  id: hold.id,
                  account,
                  amount,
                  priority: op.priority,
                  withToken: op.withToken,
                  status: 'pending',
                  settled: 0n,
                  expiresAt: hold.expiresAt.getTime(),
                });
                return hold.status;
              });
              if ('ok' in expected) {
                account.pending += amount;
                if (op.withToken) token.reserved += amount;
              }
              break;
            }
            case 'settle': {
              const hold = holds.length > 0 ? holds[op.hold % holds.length]! : undefined;
              if (!hold) {
                expected = { error: 'resource_not_found' };
              } else if (hold.status === 'pending') {
                const full = expectedCost(
                  BigInt(op.inputTokens),
                  BigInt(op.outputTokens),
                  hold.priority,
                );
                const cost = full < hold.amount ? full : hold.amount;
                hold.status = 'settled';
                hold.settled = cost;
                hold.account.debits += cost;
                hold.account.pending -= hold.amount;
                if (hold.withToken) {
                  hold.account.token.spent += cost;
                  hold.account.token.reserved -= hold.amount;
                }
                expected = { ok: `settled ${cost}` };
              } else if (hold.status === 'settled') {
                expected = { ok: `settled ${hold.settled}` };
              } else {
                expected = { error: 'conflict' };
              }
              actual = await observe(async () => {
                const result = await h.ledger.settleHold(hold?.id ?? 'hold_none', op);
                return `${result.status} ${result.costMicroDzd}`;
              });
              break;
            }
            case 'void': {
              const hold = holds.length > 0 ? holds[op.hold % holds.length]! : undefined;
              if (!hold) {
                expected = { error: 'resource_not_found' };
              } else if (hold.status === 'pending') {
                hold.status = 'voided';
                hold.account.pending -= hold.amount;
                if (hold.withToken) hold.account.token.reserved -= hold.amount;
                expected = { ok: 'voided' };
              } else if (hold.status === 'settled') {
                expected = { error: 'conflict' };
              } else {
                expected = { ok: hold.status };
              }
              actual = await observe(async () => {
                return (await h.ledger.voidHold(hold?.id ?? 'hold_none')).status;
              });
              break;
            }
            case 'expire': {
              const now = h.clock.advance(op.advanceMs);
              for (const hold of holds) {
                if (hold.status === 'pending' && hold.expiresAt <= now.getTime()) {
                  hold.status = 'expired';
                  hold.account.pending -= hold.amount;
                  if (hold.withToken) hold.account.token.reserved -= hold.amount;
                }
              }
              expected = { ok: 'swept' };
              actual = await observe(async () => {
                await h.ledger.expireHolds(now);
                return 'swept';
              });
              break;
            }
          }
          expect({ op, outcome: actual }).toEqual({ op, outcome: expected });
        }

        for (const account of accounts) {
          const balance = await h.ledger.getBalance(account.id);
          expect(balance).toEqual({
            postedCreditsMicroDzd: account.credits,
            postedDebitsMicroDzd: account.debits,
            pendingMicroDzd: account.pending,
            balanceMicroDzd: account.credits - account.debits,
            availableMicroDzd: account.credits - account.debits - account.pending,
          });
          const token = await h.prisma.scopedToken.findUniqueOrThrow({
            where: { id: account.token.id },
          });
          expect([token.spentMicroDzd, token.reservedMicroDzd]).toEqual([
            account.token.spent,
            account.token.reserved,
          ]);
        }
        for (const hold of holds) {
          const stored = await h.ledger.getHold(hold.id);
          expect([stored?.status, stored?.settledAmountMicroDzd ?? 0n]).toEqual([
            hold.status,
            hold.settled,
          ]);
        }
        const report = await h.ledger.checkInvariants();
        expect(report.violations).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});
