/**
 * Budgets' statements (plain `pg`). The counters are live in the database: admission rolls a
 * window and reserves (billing_admit_v3), the holds_budget_end trigger releases and counts. This
 * file sets, reads and removes the rows; a read shows the window as of `now` (a window whose
 * boundary passed reads as empty, as admission would roll it).
 */
import type { BudgetPeriod } from '@gateway/contracts';
import type pg from 'pg';

export type BudgetOwner = { apiKeyId: string } | { scopedTokenId: string };

export interface BudgetRow {
  id: string;
  accountId: string;
  apiKeyId: string | null;
  /** The key's name, for a key's budget. */
  apiKeyName: string | null;
  scopedTokenId: string | null;
  limitMicroDzd: bigint;
  period: BudgetPeriod;
  timeZone: string;
  /** The current window's start as of the read (rolled if its boundary passed). */
  windowStart: Date;
  spentMicroDzd: bigint;
  reservedMicroDzd: bigint;
  /** Null for a `total` budget. */
  resetsAt: Date | null;
  updatedAt: Date;
}

interface RawRow {
  id: string;
  account_id: string;
  api_key_id: string | null;
  api_key_name: string | null;
  scoped_token_id: string | null;
  limit_micro_dzd: string;
  period: BudgetPeriod;
  time_zone: string;
  window_start: Date;
  spent_micro_dzd: string;
  reserved_micro_dzd: string;
  resets_at: Date | null;
  updated_at: Date;
}

const toRow = (row: RawRow): BudgetRow => ({
  id: row.id,
  accountId: row.account_id,
  apiKeyId: row.api_key_id,
  apiKeyName: row.api_key_name,
  scopedTokenId: row.scoped_token_id,
  limitMicroDzd: BigInt(row.limit_micro_dzd),
  period: row.period,
  timeZone: row.time_zone,
  windowStart: row.window_start,
  spentMicroDzd: BigInt(row.spent_micro_dzd),
  reservedMicroDzd: BigInt(row.reserved_micro_dzd),
  resetsAt: row.resets_at,
  updatedAt: row.updated_at,
});

// The window as admission would see it at $now: rolled (spent 0) once its boundary passed.
const AS_OF = `
  SELECT b.id, b.account_id, b.api_key_id, k.name AS api_key_name, b.scoped_token_id, b.limit_micro_dzd, b.period,
         b.time_zone, b.updated_at, b.reserved_micro_dzd,
         GREATEST(b.window_start, billing_budget_window_start(b.period, b.time_zone, $NOW)) AS window_start,
         CASE WHEN billing_budget_window_start(b.period, b.time_zone, $NOW) > b.window_start
              THEN 0 ELSE b.spent_micro_dzd END AS spent_micro_dzd,
         billing_budget_resets_at(b.period, b.time_zone,
           GREATEST(b.window_start, billing_budget_window_start(b.period, b.time_zone, $NOW))) AS resets_at
    FROM budgets b LEFT JOIN api_keys k ON k.id = b.api_key_id`;

const asOf = (placeholder: string) => AS_OF.replaceAll('$NOW', placeholder);

/** The owner's column (one of two fixed names, never input) and its id. */
const ownerColumn = (owner: BudgetOwner): ['api_key_id' | 'scoped_token_id', string] =>
  'apiKeyId' in owner ? ['api_key_id', owner.apiKeyId] : ['scoped_token_id', owner.scopedTokenId];

export class BudgetRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Sets the owner's budget. A new budget, or a change of limit, period or zone, starts a new
   * window at `now` with nothing spent; the reservations of pending holds stay. The same values
   * again change nothing (an idempotent PUT).
   */
  async put(
    accountId: string,
    owner: BudgetOwner,
    budget: { id: string; limitMicroDzd: bigint; period: BudgetPeriod; timeZone: string },
    now: Date,
  ): Promise<BudgetRow> {
    const [column, ownerId] = ownerColumn(owner);
    await this.pool.query(
      `INSERT INTO budgets AS b (id, account_id, ${column}, limit_micro_dzd, period, time_zone,
                                 window_start, created_at, updated_at)
       VALUES ($1, $2, $3, $4::bigint, $5, $6, $7, $7, $7)
       ON CONFLICT (${column}) DO UPDATE
          SET limit_micro_dzd = EXCLUDED.limit_micro_dzd, period = EXCLUDED.period,
              time_zone = EXCLUDED.time_zone,
              -- Never back: an admission may have rolled the window since this change read the clock.
              window_start = GREATEST(EXCLUDED.window_start, b.window_start),
              spent_micro_dzd = 0, updated_at = EXCLUDED.updated_at
        WHERE (b.limit_micro_dzd, b.period, b.time_zone)
              IS DISTINCT FROM (EXCLUDED.limit_micro_dzd, EXCLUDED.period, EXCLUDED.time_zone)`,
      [
        budget.id,
        accountId,
        ownerId,
        budget.limitMicroDzd.toString(),
        budget.period,
        budget.timeZone,
        now,
      ],
    );
    const row = await this.find(owner, now);
    if (!row) throw new Error('budget vanished after its upsert');
    return row;
  }

  async find(owner: BudgetOwner, now: Date): Promise<BudgetRow | null> {
    const [column, id] = ownerColumn(owner);
    const { rows } = await this.pool.query<RawRow>(
      `${asOf('$2::timestamptz')} WHERE b.${column} = $1`,
      [id, now],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Every budget of the account (its keys' and its tokens'), as of `now`. */
  async listForAccount(accountId: string, now: Date, limit: number): Promise<BudgetRow[]> {
    const { rows } = await this.pool.query<RawRow>(
      `${asOf('$2::timestamptz')} WHERE b.account_id = $1 ORDER BY b.created_at, b.id LIMIT $3`,
      [accountId, now, limit],
    );
    return rows.map(toRow);
  }

  /** Removes the owner's budget; false when it had none. Its pending holds count nowhere. */
  async remove(owner: BudgetOwner): Promise<boolean> {
    const [column, id] = ownerColumn(owner);
    const result = await this.pool.query(`DELETE FROM budgets WHERE ${column} = $1`, [id]);
    return result.rowCount === 1;
  }

  /** The ids of an account's API key (by name) and scoped token (by id), for the routes. */
  async apiKeyId(accountId: string, keyName: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ id: string }>(
      'SELECT id FROM api_keys WHERE account_id = $1 AND name = $2',
      [accountId, keyName],
    );
    return rows[0]?.id ?? null;
  }

  async scopedTokenExists(accountId: string, tokenId: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      'SELECT 1 FROM scoped_tokens WHERE account_id = $1 AND id = $2',
      [accountId, tokenId],
    );
    return rows.length === 1;
  }

  /** True when PostgreSQL knows the IANA zone name (what the window functions will use). */
  async knowsTimeZone(timeZone: string): Promise<boolean> {
    const { rows } = await this.pool.query('SELECT 1 FROM pg_timezone_names WHERE name = $1', [
      timeZone,
    ]);
    return rows.length === 1;
  }
}
