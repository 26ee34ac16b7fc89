/**
 * What a receipt is made of, read with plain `pg` (billing's pool): the hold, its usage record
 * (absent while the request runs, or after retention purged it) and the ledger transactions
 * that moved its money. Read only; everything here is written by the ledger's own paths.
 */
import type pg from 'pg';

export interface ReceiptRow {
  id: string;
  account_id: string;
  model: string;
  hold_status: 'pending' | 'settled' | 'voided' | 'expired';
  amount_micro_dzd: string;
  settled_amount_micro_dzd: string | null;
  input_price_micro_dzd_per_m: string | null;
  output_price_micro_dzd_per_m: string | null;
  priority: boolean;
  created_at: Date;
  finalized_at: Date | null;
  refunded_at: Date | null;
  request_id: string | null;
  endpoint: string | null;
  api_key_name: string | null;
  scoped_token_id: string | null;
  /** From the usage record; null without one. */
  outcome: string | null;
  prompt_tokens: string | null;
  completion_tokens: string | null;
  reasoning_tokens: string | null;
  refunded_micro_dzd: string | null;
  refund_transaction_id: string | null;
  queue_latency_ms: string | null;
  generation_latency_ms: string | null;
}

export interface ReceiptTransactionRow {
  id: string;
  kind: string;
  entry_ids: string[];
}

/** The hold named by `$2` as a job (hold) id, else the newest of the account's with that request id. */
const FIND = `
  WITH target AS (
    SELECT id FROM (
      SELECT h.id, 0 AS rank FROM holds h WHERE h.id = $2 AND h.account_id = $1
      UNION ALL
      (SELECT x.id, 1 FROM (
          SELECT u.hold_id AS id, u.created_at FROM usage_records u
           WHERE u.account_id = $1 AND u.request_id = $2
          UNION ALL
          SELECT h.id, h.created_at FROM holds h
           WHERE h.account_id = $1 AND h.status = 'pending' AND h.request_id = $2
       ) x ORDER BY x.created_at DESC, x.id DESC LIMIT 1)
    ) candidates ORDER BY rank LIMIT 1
  )
  SELECT h.id, h.account_id, h.model, h.status::text AS hold_status,
         h.amount_micro_dzd::text, h.settled_amount_micro_dzd::text,
         h.input_price_micro_dzd_per_m::text, h.output_price_micro_dzd_per_m::text,
         h.priority, h.created_at, h.finalized_at, h.refunded_at,
         COALESCE(u.request_id, h.request_id) AS request_id,
         COALESCE(u.endpoint, h.endpoint) AS endpoint,
         COALESCE(u.api_key_name, h.api_key_name) AS api_key_name, h.scoped_token_id,
         u.outcome, u.prompt_tokens::text, u.completion_tokens::text, u.reasoning_tokens::text,
         u.refunded_micro_dzd::text, u.refund_transaction_id,
         u.queue_latency_ms::text, u.generation_latency_ms::text
    FROM target t JOIN holds h ON h.id = t.id
    LEFT JOIN usage_records u ON u.hold_id = h.id`;

/** The settlement (by its hold) and the refund (by its id), each with its entries. */
const TRANSACTIONS = `
  SELECT t.id, t.kind::text AS kind,
         COALESCE(array_agg(e.id::text ORDER BY e.id) FILTER (WHERE e.id IS NOT NULL), '{}')
           AS entry_ids
    FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
   WHERE (t.hold_id = $1 AND t.kind = 'hold_settlement') OR t.id = $2
   GROUP BY t.id, t.kind`;

export class ReceiptRepository {
  constructor(private readonly pool: pg.Pool) {}

  async find(accountId: string, id: string): Promise<ReceiptRow | null> {
    const { rows } = await this.pool.query<ReceiptRow>(FIND, [accountId, id]);
    return rows[0] ?? null;
  }

  async transactions(
    holdId: string,
    refundTransactionId: string | null,
  ): Promise<ReceiptTransactionRow[]> {
    const { rows } = await this.pool.query<ReceiptTransactionRow>(TRANSACTIONS, [
      holdId,
      refundTransactionId,
    ]);
    return rows;
  }
}
