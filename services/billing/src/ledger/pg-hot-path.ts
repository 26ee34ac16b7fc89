/**
 * The ledger's hot path on plain `pg` (no ORM): settle, void, the publish mark and getHold are
 * each ONE round trip (the publish mark for a batch of holds), a named prepared statement on the shared pool (parsed and planned once
 * per connection).
 * Settle and void are @gateway/ledger-calls' statements (shared with the worker, ADR 0070).
 * Amounts travel as text and come back as text (int8), read as bigint: no float anywhere.
 */
import { int8, settleHolds, voidHold } from '@gateway/ledger-calls';
import type pg from 'pg';
import type {
  PublishMark,
  RefundOutcome,
  SettleOutcome,
  SettleInput,
  VoidOutcome,
  VoidReport,
} from './store.js';
import type { HoldStatus, LedgerHold } from './types.js';

const REFUND = {
  name: 'ledger_refund_hold_v1',
  text: 'SELECT * FROM ledger_refund_hold($1::text, $2::text, $3::timestamptz)',
};
const MARK_ANSWER_DELIVERED = {
  name: 'ledger_mark_answer_delivered_v1',
  text: `UPDATE holds SET answer_delivered_at = COALESCE(answer_delivered_at, $2)
          WHERE id = $1
      RETURNING refunded_at IS NOT NULL AS refunded`,
};
const ANSWER_DELIVERED = {
  name: 'ledger_answer_delivered_v1',
  text: 'SELECT answer_delivered_at IS NOT NULL AS delivered FROM holds WHERE id = $1',
};
const FIND_HOLD = {
  name: 'ledger_find_hold_v1',
  text: `SELECT id, account_id, scoped_token_id, amount_micro_dzd, status::text AS status,
                settled_amount_micro_dzd, model, priority, expires_at, created_at, finalized_at
           FROM holds WHERE id = $1`,
};

// One statement under the row locks, taken in id order like the settlement's (no deadlock): it
// and the sweeper's release are mutually exclusive per hold.
const MARK_PUBLISHED = {
  name: 'ledger_mark_holds_published_v2',
  text: `WITH marks AS (SELECT * FROM unnest($2::text[], $3::timestamptz[]) AS m(id, expires_at)),
              locked AS (SELECT h.id FROM holds h JOIN marks m ON m.id = h.id
                          WHERE h.status = 'pending' ORDER BY h.id FOR UPDATE OF h)
         UPDATE holds h SET published_at = $1::timestamptz,
                            expires_at = GREATEST(h.expires_at, m.expires_at)
           FROM marks m
          WHERE h.id = m.id AND h.id IN (SELECT id FROM locked) AND h.status = 'pending'
      RETURNING h.id`,
};

type Int8 = string | null;

export interface HoldRow {
  id: string;
  account_id: string;
  scoped_token_id: string | null;
  amount_micro_dzd: string;
  status: HoldStatus;
  settled_amount_micro_dzd: Int8;
  model: string;
  priority: boolean;
  expires_at: Date;
  created_at: Date;
  finalized_at: Date | null;
}

export class PgHotPath {
  constructor(private readonly pool: pg.Pool) {}

  /** One statement, one transaction for the batch; one outcome per request, in order. */
  settleHolds(requests: readonly SettleInput[], at: Date): Promise<SettleOutcome[]> {
    return settleHolds(this.pool, requests, at);
  }

  voidHold(holdId: string, at: Date, report: VoidReport = {}): Promise<VoidOutcome> {
    return voidHold(this.pool, holdId, at, report);
  }

  async refundHold(holdId: string, transactionId: string, at: Date): Promise<RefundOutcome> {
    const { rows } = await this.pool.query<{
      outcome: string;
      refunded_micro_dzd: Int8;
    }>({ ...REFUND, values: [holdId, transactionId, at] });
    const row = rows[0];
    if (!row) throw new Error('ledger_refund_hold returned no row');
    if (row.outcome === 'not_found') return { outcome: 'not_found' };
    if (row.outcome !== 'refunded' && row.outcome !== 'replayed' && row.outcome !== 'not_settled') {
      throw new Error(`ledger_refund_hold: unknown outcome ${row.outcome}`);
    }
    return {
      outcome: row.outcome,
      refundedMicroDzd: BigInt(row.refunded_micro_dzd ?? '0'),
    };
  }

  /**
   * Marks pending holds published and extends each one's expiry to at least its `expiresAt` (the
   * job's end plus settlement time); returns the ids marked (a final or unknown hold is not).
   */
  async markHoldsPublished(marks: readonly PublishMark[], at: Date): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>({
      ...MARK_PUBLISHED,
      values: [at, marks.map((mark) => mark.holdId), marks.map((mark) => mark.expiresAt)],
    });
    return new Set(rows.map((row) => row.id));
  }

  /** Null for an unknown hold; whether it was refunded already otherwise. */
  async markAnswerDelivered(holdId: string, at: Date): Promise<{ refunded: boolean } | null> {
    const { rows } = await this.pool.query<{ refunded: boolean }>({
      ...MARK_ANSWER_DELIVERED,
      values: [holdId, at],
    });
    return rows[0] ?? null;
  }

  async answerDelivered(holdId: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ delivered: boolean }>({
      ...ANSWER_DELIVERED,
      values: [holdId],
    });
    return rows[0]?.delivered === true;
  }

  async findHold(holdId: string): Promise<LedgerHold | null> {
    const { rows } = await this.pool.query<HoldRow>({ ...FIND_HOLD, values: [holdId] });
    const row = rows[0];
    return row ? toLedgerHold(row) : null;
  }
}

export function toLedgerHold(row: HoldRow): LedgerHold {
  return {
    id: row.id,
    accountId: row.account_id,
    scopedTokenId: row.scoped_token_id,
    amountMicroDzd: BigInt(row.amount_micro_dzd),
    status: row.status,
    settledAmountMicroDzd: int8(row.settled_amount_micro_dzd),
    model: row.model,
    priority: row.priority,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    finalizedAt: row.finalized_at,
  };
}
