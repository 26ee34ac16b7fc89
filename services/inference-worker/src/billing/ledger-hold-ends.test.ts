import { GatewayError } from '@gateway/contracts';
import type pg from 'pg';
import { createLedgerHoldEnds } from './ledger-hold-ends.js';

/*
 * What the worker makes of the ledger functions' rows, without a database: a pool that answers
 * each statement with the rows a test gives (the statements themselves run against PostgreSQL in
 * ledger-hold-ends.integration.test.ts).
 */

const HOLD_COLUMNS = {
  account_id: 'usr_a',
  amount_micro_dzd: '5000',
  expires_at: new Date('2026-11-30T00:00:00Z'),
  finalized_at: new Date('2026-11-30T00:00:01Z'),
  credits: '100000',
  debits: '4000',
  pending: '0',
};

function poolAnswering(...answers: (Record<string, unknown>[] | Error)[]) {
  const statements: { name: string; values: unknown[] }[] = [];
  const pool = {
    query: async (statement: { name: string; values: unknown[] }) => {
      statements.push(statement);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('one statement too many');
      if (answer instanceof Error) throw answer;
      return { rows: answer };
    },
    end: async () => undefined,
  } as unknown as pg.Pool;
  return { pool, statements };
}

const settleRow = (outcome: string, extra: Record<string, unknown> = {}) => ({
  ord: 1,
  outcome,
  hold_id: 'hold_a',
  status: 'settled',
  model: 'acme/chat',
  cost_micro_dzd: '4000',
  transaction_id: 'txn_a',
  error_state: null,
  error_message: null,
  ...HOLD_COLUMNS,
  ...extra,
});

const USAGE = { inputTokens: 100, outputTokens: 50, startedAtMs: 1_764_460_800_000 };

describe('the ledger hold ends', () => {
  it('answers a settlement with its cost and the balance after it, and counts the charge', async () => {
    const { pool, statements } = poolAnswering([settleRow('settled')]);
    const counted: number[] = [];
    const ends = createLedgerHoldEnds({
      pool,
      batchMaxInFlight: 1,
      settledMicroDzd: { inc: (value) => counted.push(value) },
    });
    await expect(ends.settle('hold_a', USAGE)).resolves.toEqual({
      kind: 'settled',
      costMicroDzd: 4000n,
      balanceMicroDzd: 96_000n,
      replayed: false,
    });
    expect(counted).toEqual([4000]);
    const [values] = statements.map((statement) => statement.values);
    expect(values!.slice(0, 3)).toEqual([['hold_a'], ['100'], ['50']]);
    expect(values![6]).toEqual([new Date(USAGE.startedAtMs)]);
  });

  it('does not count a replayed settlement again', async () => {
    const { pool } = poolAnswering([settleRow('replayed')]);
    const counted: number[] = [];
    const ends = createLedgerHoldEnds({
      pool,
      batchMaxInFlight: 1,
      settledMicroDzd: { inc: (value) => counted.push(value) },
    });
    await expect(ends.settle('hold_a', USAGE)).resolves.toMatchObject({ replayed: true });
    expect(counted).toEqual([]);
  });

  it('answers a hold already voided as already final, in the words billing uses', async () => {
    const { pool } = poolAnswering([settleRow('conflict', { status: 'voided' })]);
    const ends = createLedgerHoldEnds({ pool, batchMaxInFlight: 1 });
    await expect(ends.settle('hold_a', USAGE)).resolves.toEqual({
      kind: 'already_final',
      reason: 'Hold hold_a was voided at 2026-11-30T00:00:01.000Z; it can no longer be settled.',
    });
  });

  it('refuses an unknown hold with a 404, not as an outage', async () => {
    const { pool } = poolAnswering([{ ord: 1, outcome: 'not_found' }]);
    const ends = createLedgerHoldEnds({ pool, batchMaxInFlight: 1 });
    const refusal = ends.settle('hold_a', USAGE);
    await expect(refusal).rejects.toBeInstanceOf(GatewayError);
    await expect(refusal).rejects.toMatchObject({ status: 404 });
  });

  it('tries a deadlocked settlement again under a new transaction id', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const { pool, statements } = poolAnswering(deadlock, [settleRow('settled')]);
    const ends = createLedgerHoldEnds({ pool, batchMaxInFlight: 1 });
    await expect(ends.settle('hold_a', USAGE)).resolves.toMatchObject({ kind: 'settled' });
    const [first, second] = statements.map((statement) => statement.values[3]);
    expect(first).not.toEqual(second);
  });

  it('passes a connection failure on for the caller to queue the settlement', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const ends = createLedgerHoldEnds({ pool: poolAnswering(refused).pool, batchMaxInFlight: 1 });
    await expect(ends.settle('hold_a', USAGE)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('answers a hold the sweeper expired first as expired', async () => {
    const voidRow = { outcome: 'replayed', status: 'expired', settled_amount_micro_dzd: null };
    const { pool, statements } = poolAnswering([{ ...HOLD_COLUMNS, ...voidRow }]);
    const ends = createLedgerHoldEnds({ pool, batchMaxInFlight: 1 });
    await expect(ends.void('hold_a', { outcome: 'cancelled' })).resolves.toEqual({
      kind: 'expired',
      replayed: true,
    });
    expect(statements[0]!.values[2]).toBe('cancelled');
  });
});
