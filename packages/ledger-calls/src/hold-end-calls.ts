/**
 * Billing's hold-ending SQL functions as calls on a `pg` pool: `usage_settle_holds` (a batch of
 * settlements in one statement, one transaction, one outcome per item) and `usage_void_hold`.
 * Billing owns the functions and their migrations; billing and the inference worker call them
 * (ADR 0070), so that the statements and the reading of their rows exist once. Each is a named
 * prepared statement (parsed and planned once per connection). Amounts travel as text and come
 * back as text (int8), read as bigint.
 */
import type pg from 'pg';
import type {
  Balance,
  HoldState,
  HoldStatus,
  SettleInput,
  SettleOutcome,
  VoidOutcome,
  VoidReport,
} from './outcomes.js';

// The usage wrappers (billing's migration 20270107090000) run the ledger functions, then write
// (settle, migration 20270128090000) or complete (void) the request's usage record in the same
// statement.
const SETTLE = {
  name: 'usage_settle_holds_v1',
  text: `SELECT * FROM usage_settle_holds($1::text[], $2::bigint[], $3::bigint[], $4::text[],
                                           $5::timestamptz, $6::bigint[], $7::timestamptz[],
                                           $8::bigint[], $9::boolean[])`,
};
const VOID = {
  name: 'usage_void_hold_v1',
  text: `SELECT * FROM usage_void_hold($1::text, $2::timestamptz, $3::text, $4::timestamptz,
                                       $5::bigint)`,
};

type Int8 = string | null;

interface HoldColumns {
  account_id: string;
  status: HoldStatus;
  amount_micro_dzd: Int8;
  expires_at: Date;
  finalized_at: Date | null;
  credits: Int8;
  debits: Int8;
  pending: Int8;
}

interface SettleRow extends HoldColumns {
  ord: number;
  outcome: string;
  hold_id: string;
  model: string | null;
  cost_micro_dzd: Int8;
  transaction_id: string | null;
  error_state: string | null;
  error_message: string | null;
}

interface VoidRow extends HoldColumns {
  outcome: string;
  settled_amount_micro_dzd: Int8;
}

/** An int8 column read exactly (`pg` returns int8 as text). */
export const int8 = (value: Int8): bigint | null => (value === null ? null : BigInt(value));

function balanceOf(row: HoldColumns): Balance | null {
  const [credits, debits, pending] = [int8(row.credits), int8(row.debits), int8(row.pending)];
  if (credits === null || debits === null || pending === null) return null;
  const balance = credits - debits;
  return {
    postedCreditsMicroDzd: credits,
    postedDebitsMicroDzd: debits,
    pendingMicroDzd: pending,
    balanceMicroDzd: balance,
    availableMicroDzd: balance - pending,
  };
}

function holdState(id: string, row: HoldColumns, settled: Int8, model: string | null): HoldState {
  return {
    id,
    accountId: row.account_id,
    status: row.status,
    amountMicroDzd: int8(row.amount_micro_dzd) ?? 0n,
    settledAmountMicroDzd: int8(settled),
    expiresAt: row.expires_at,
    finalizedAt: row.finalized_at,
    model,
  };
}

function toSettleOutcome(row: SettleRow): SettleOutcome {
  switch (row.outcome) {
    case 'not_found':
      return { outcome: 'not_found' };
    case 'error':
      return {
        outcome: 'error',
        sqlState: row.error_state ?? 'XX000',
        message: row.error_message ?? '',
      };
    case 'settled':
    case 'replayed':
      return {
        outcome: row.outcome,
        hold: holdState(row.hold_id, row, row.cost_micro_dzd, row.model),
        costMicroDzd: int8(row.cost_micro_dzd) ?? 0n,
        transactionId: row.transaction_id ?? '',
        balance: balanceOf(row),
      };
    case 'conflict':
    case 'unpriced':
      return {
        outcome: row.outcome,
        hold: holdState(row.hold_id, row, row.cost_micro_dzd, row.model),
      };
    default:
      throw new Error(`ledger_settle_holds: unknown outcome ${row.outcome}`);
  }
}

/**
 * Settles holds in ONE statement, one transaction (autocommit) for the whole batch; one outcome
 * per request, in order. A request that fails does not fail the others (each runs in its own
 * savepoint).
 */
export async function settleHolds(
  pool: pg.Pool | pg.PoolClient,
  requests: readonly SettleInput[],
  at: Date,
): Promise<SettleOutcome[]> {
  const { rows } = await pool.query<SettleRow>({
    ...SETTLE,
    values: [
      requests.map((r) => r.holdId),
      requests.map((r) => r.inputTokens.toString()),
      requests.map((r) => r.outputTokens.toString()),
      requests.map((r) => r.transactionId),
      at,
      requests.map((r) => r.reasoningTokens?.toString() ?? null),
      requests.map((r) => r.startedAt ?? null),
      requests.map((r) => r.generationMs ?? null),
      requests.map((r) => r.cancelled ?? false),
    ],
  });
  const outcomes = new Array<SettleOutcome>(requests.length);
  for (const row of rows) outcomes[row.ord - 1] = toSettleOutcome(row);
  if (rows.length !== requests.length) throw new Error('ledger_settle_holds lost an item');
  return outcomes;
}

/** Voids one hold and completes its usage record with `report`, in one statement. */
export async function voidHold(
  pool: pg.Pool,
  holdId: string,
  at: Date,
  report: VoidReport = {},
): Promise<VoidOutcome> {
  const { rows } = await pool.query<VoidRow>({
    ...VOID,
    values: [
      holdId,
      at,
      report.outcome ?? null,
      report.startedAt ?? null,
      report.generationMs ?? null,
    ],
  });
  const row = rows[0];
  if (!row) throw new Error('ledger_void_hold returned no row');
  if (row.outcome === 'not_found') return { outcome: 'not_found' };
  const hold = holdState(holdId, row, row.settled_amount_micro_dzd, null);
  if (row.outcome === 'conflict') return { outcome: 'conflict', hold };
  if (row.outcome !== 'voided' && row.outcome !== 'replayed') {
    throw new Error(`ledger_void_hold: unknown outcome ${row.outcome}`);
  }
  return { outcome: row.outcome, hold, balance: balanceOf(row) };
}
