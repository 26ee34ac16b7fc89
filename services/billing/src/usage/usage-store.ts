/**
 * Usage records in PostgreSQL (plain `pg`, billing's pool): grouped sums, the request log, and
 * the retention purge. Records are written by the database itself when a hold ends (migration
 * 20270107090000); this module only reads them and deletes old ones.
 */
import type pg from 'pg';
import type { UsageGroupBy } from '@gateway/contracts';
import type { LogCursor, UsageLogQuery, UsageQuery } from './query.js';

export interface UsageSumRow {
  account_id?: string;
  day?: string;
  model?: string;
  key?: string | null;
  scoped_token_id?: string | null;
  requests: string;
  prompt_tokens: string;
  completion_tokens: string;
  /** Net: settled − refunded. */
  cost_micro_dzd: string;
  refunded_micro_dzd: string;
}

export interface UsageLogRow {
  account_id: string;
  request_id: string | null;
  hold_id: string;
  created_at: Date;
  ended_at: Date;
  endpoint: string | null;
  model: string;
  api_key_name: string | null;
  scoped_token_id: string | null;
  priority: boolean;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
  /** Net: settled − refunded. */
  cost_micro_dzd: string;
  refunded_micro_dzd: string;
  outcome: string;
  queue_latency_ms: string | null;
  generation_latency_ms: string | null;
  stored: boolean;
}

// Group keys are fixed SQL per group_by (never text from the request).
const DAY_COLUMN = `to_char(ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`;
const GROUP_COLUMNS: Record<UsageGroupBy, string[]> = {
  day: [DAY_COLUMN],
  model: ['model'],
  key: ['api_key_name AS key', 'scoped_token_id'],
  'day,model': [DAY_COLUMN, 'model'],
};

/** Purged per statement at most, so a backlog never holds locks long. */
const PURGE_BATCH_ROWS = 1000;
const PURGE_MAX_STATEMENTS = 50;

export class UsageStore {
  constructor(private readonly pool: pg.Pool) {}

  /** At most `limit` groups, in key order (the caller asks one more to tell it overflowed). */
  async sums(query: UsageQuery, perAccount: boolean, limit: number): Promise<UsageSumRow[]> {
    const columns = [...(perAccount ? ['account_id'] : []), ...GROUP_COLUMNS[query.groupBy]];
    const keys = columns.map((_c, i) => String(i + 1)).join(', ');
    const { rows } = await this.pool.query<UsageSumRow>(
      `SELECT ${columns.join(', ')}, count(*)::text AS requests,
              sum(prompt_tokens)::text AS prompt_tokens,
              sum(completion_tokens)::text AS completion_tokens,
              sum(cost_micro_dzd - refunded_micro_dzd)::text AS cost_micro_dzd,
              sum(refunded_micro_dzd)::text AS refunded_micro_dzd
         FROM usage_records
        WHERE ended_at >= $1 AND ended_at < $2 AND ($3::text IS NULL OR account_id = $3)
        GROUP BY ${keys} ORDER BY ${keys} LIMIT $4`,
      [query.from, query.to, query.accountId ?? null, limit],
    );
    return rows;
  }

  /** Newest first, `limit + 1` rows (the caller tells whether there is a next page). */
  async log(query: UsageLogQuery): Promise<UsageLogRow[]> {
    const after: LogCursor | undefined = query.after;
    const { rows } = await this.pool.query<UsageLogRow>(
      `SELECT account_id, request_id, hold_id, created_at, ended_at, endpoint, model,
              api_key_name, scoped_token_id, priority, prompt_tokens::text, completion_tokens::text,
              reasoning_tokens::text, (cost_micro_dzd - refunded_micro_dzd)::text AS cost_micro_dzd,
              refunded_micro_dzd::text, outcome, queue_latency_ms::text,
              generation_latency_ms::text,
              -- A Responses API job's id is its stored response's id (resp_…).
              EXISTS (SELECT 1 FROM stored_responses s WHERE s.id = usage_records.hold_id) AS stored
         FROM usage_records
        WHERE ended_at >= $1 AND ended_at < $2 AND ($3::text IS NULL OR account_id = $3)
          AND ($4::timestamptz IS NULL OR (ended_at, hold_id) < ($4::timestamptz, $5::text))
        ORDER BY ended_at DESC, hold_id DESC LIMIT $6`,
      [
        query.from,
        query.to,
        query.accountId ?? null,
        after?.endedAt ?? null,
        after?.holdId ?? null,
        query.limit + 1,
      ],
    );
    return rows;
  }

  /**
   * Deletes records that ended before `before`, their counts and costs added to
   * `usage_purged_totals` in the same statement (the ledger reconciliation stays exact).
   * Replicas may purge at once: rows are taken with SKIP LOCKED. Returns how many went.
   */
  async purge(before: Date): Promise<number> {
    let total = 0;
    for (let i = 0; i < PURGE_MAX_STATEMENTS; i += 1) {
      const { rows } = await this.pool.query<{ purged: string }>(
        `WITH doomed AS (
           SELECT hold_id FROM usage_records WHERE ended_at < $1
            ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED
         ), gone AS (
           DELETE FROM usage_records u USING doomed d WHERE u.hold_id = d.hold_id
           RETURNING u.account_id, u.cost_micro_dzd, u.refunded_micro_dzd
         ), totals AS (
           INSERT INTO usage_purged_totals AS p
                  (account_id, requests, cost_micro_dzd, refunded_micro_dzd, purged_before)
           SELECT account_id, count(*), sum(cost_micro_dzd), sum(refunded_micro_dzd), $1
             FROM gone GROUP BY account_id
           ON CONFLICT (account_id) DO UPDATE
              SET requests = p.requests + EXCLUDED.requests,
                  cost_micro_dzd = p.cost_micro_dzd + EXCLUDED.cost_micro_dzd,
                  refunded_micro_dzd = p.refunded_micro_dzd + EXCLUDED.refunded_micro_dzd,
                  purged_before = GREATEST(p.purged_before, EXCLUDED.purged_before)
           RETURNING requests
         )
         SELECT (SELECT count(*) FROM gone)::text AS purged`,
        [before, PURGE_BATCH_ROWS],
      );
      const purged = Number(rows[0]?.purged ?? 0);
      total += purged;
      if (purged < PURGE_BATCH_ROWS) break;
    }
    return total;
  }
}
