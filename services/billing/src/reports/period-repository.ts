/**
 * Closed periods: the digest of a period's entries, and the `ledger_periods` rows (inserted
 * once, never changed). The digest is SHA-256 over one line per entry (id, transaction, ledger
 * account, amount, time in UTC to the millisecond), in id order, computed by PostgreSQL.
 */
import type pg from 'pg';
import { inPoolTransaction } from '@gateway/runtime';
import type { PeriodReport } from '@gateway/contracts';

export interface EntriesDigest {
  count: string;
  digest: string;
}

export interface ClosedPeriodRow {
  period: string;
  time_zone: string;
  starts_at: Date;
  ends_at: Date;
  entries_count: string;
  entries_digest: string;
  report: PeriodReport;
  closed_at: Date;
  closed_by: string;
}

/**
 * The last closed period that ended at or before an instant: its carried-forward balances open
 * what follows, so only the entries after its end are read. None: the ledger's start.
 */
export interface Anchor {
  period: string | null;
  /** `-infinity` when there is no closed period before. */
  endsAt: Date | '-infinity';
}

export async function anchorAt(db: pg.Pool | pg.PoolClient, at: Date): Promise<Anchor> {
  const { rows } = await db.query<{ period: string; ends_at: Date }>(
    'SELECT period, ends_at FROM ledger_periods WHERE ends_at <= $1 ORDER BY ends_at DESC LIMIT 1',
    [at],
  );
  const row = rows[0];
  return row ? { period: row.period, endsAt: row.ends_at } : { period: null, endsAt: '-infinity' };
}

/**
 * Every ledger leg before `$<to>`, read from an anchor: its balances first, as legs of kind
 * `opening` at `-infinity` (before any period), then the entries from its end. The parameters
 * are numbered by the caller: `$<period>` the anchor's period (null: none), `$<from>` its end.
 */
export function legsSinceAnchor(
  at: { period: number; from: number; to: number },
  options: { kind: boolean },
): string {
  // The transaction's kind costs a join: only the roll-forward asks for it. A transaction has
  // its entries' time (the invariant check proves it), which bounds the transactions read to the
  // period's; an entry whose transaction is not found keeps no kind and shows as a difference.
  const kind = options.kind ? 't.kind::text' : 'NULL::text';
  const join = options.kind
    ? `LEFT JOIN ledger_transactions t
         ON t.id = e.transaction_id AND t.created_at = e.created_at
        AND t.created_at >= $${at.from}::timestamptz AND t.created_at < $${at.to}::timestamptz`
    : '';
  return `
    SELECT b.ledger_account, b.account_id, b.closing_micro_dzd AS amount_micro_dzd,
           '-infinity'::timestamptz AS created_at, 'opening' AS kind
      FROM ledger_period_balances b WHERE b.period = $${at.period}::text
    UNION ALL
    SELECT e.ledger_account, e.account_id, e.amount_micro_dzd, e.created_at, ${kind}
      FROM ledger_entries e ${join}
     WHERE e.created_at >= $${at.from}::timestamptz AND e.created_at < $${at.to}::timestamptz`;
}

/** Each ledger account's balance at `$<to>`: the anchor's balances plus the entries since. */
function balancesAt(at: { period: number; from: number; to: number }): string {
  return `
    SELECT ledger_account, min(account_id) AS account_id, sum(amount_micro_dzd) AS closing
      FROM (${legsSinceAnchor(at, { kind: false })}) AS legs
     GROUP BY ledger_account`;
}

/** On the pool, or on a transaction's client (the report's snapshot at a close). */
export async function entriesDigest(
  db: pg.Pool | pg.PoolClient,
  startsAt: Date,
  endsAt: Date,
): Promise<EntriesDigest> {
  const { rows } = await db.query<EntriesDigest>(
    `SELECT count(*)::text AS count,
            encode(sha256(convert_to(COALESCE(string_agg(
              id::text || '|' || transaction_id || '|' || ledger_account || '|' ||
              amount_micro_dzd::text || '|' ||
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS'),
              E'\\n' ORDER BY id), ''), 'UTF8')), 'hex') AS digest
       FROM ledger_entries
      WHERE created_at >= $1 AND created_at < $2`,
    [startsAt, endsAt],
  );
  return rows[0]!;
}

const COLUMNS = `period, time_zone, starts_at, ends_at, entries_count::text, entries_digest, report,
                 closed_at, closed_by`;

export class PeriodRepository {
  constructor(private readonly pool: pg.Pool) {}

  entriesDigest(startsAt: Date, endsAt: Date): Promise<EntriesDigest> {
    return entriesDigest(this.pool, startsAt, endsAt);
  }

  /**
   * The period and its carried-forward balances, in one transaction. False when the period was
   * closed already (the first close stands).
   */
  async insert(row: ClosedPeriodRow): Promise<boolean> {
    return inPoolTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `INSERT INTO ledger_periods (period, time_zone, starts_at, ends_at, entries_count,
                                     entries_digest, report, closed_at, closed_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (period) DO NOTHING`,
        [
          row.period,
          row.time_zone,
          row.starts_at,
          row.ends_at,
          row.entries_count,
          row.entries_digest,
          JSON.stringify(row.report),
          row.closed_at,
          row.closed_by,
        ],
      );
      if (rowCount === 1) await insertBalances(client, row);
      return rowCount === 1;
    });
  }

  /**
   * How many ledger accounts' stored balances at a closed period's end differ from the previous
   * close's plus the entries since (the first close: every entry before its end); 0 when equal.
   */
  async balanceDifferences(row: ClosedPeriodRow): Promise<number> {
    const anchor = await anchorAt(this.pool, row.starts_at);
    const { rows } = await this.pool.query<{ differences: number }>(
      `WITH expected AS (${balancesAt({ period: 1, from: 2, to: 3 })}),
            stored AS (SELECT ledger_account, closing_micro_dzd AS closing
                         FROM ledger_period_balances WHERE period = $4)
       SELECT count(*)::int AS differences
         FROM expected FULL JOIN stored USING (ledger_account)
        WHERE expected.closing IS DISTINCT FROM stored.closing`,
      [anchor.period, anchor.endsAt, row.ends_at, row.period],
    );
    return rows[0]!.differences;
  }

  async find(period: string): Promise<ClosedPeriodRow | null> {
    const { rows } = await this.pool.query<ClosedPeriodRow>(
      `SELECT ${COLUMNS} FROM ledger_periods WHERE period = $1`,
      [period],
    );
    return rows[0] ?? null;
  }

  /** Every closed period, oldest first (one a month: a few hundred over decades). */
  async list(): Promise<ClosedPeriodRow[]> {
    const { rows } = await this.pool.query<ClosedPeriodRow>(
      `SELECT ${COLUMNS} FROM ledger_periods ORDER BY period`,
    );
    return rows;
  }
}

/** Every ledger account with an entry before the period's end, zero balances included. */
async function insertBalances(client: pg.PoolClient, row: ClosedPeriodRow): Promise<void> {
  const anchor = await anchorAt(client, row.starts_at);
  await client.query(
    `INSERT INTO ledger_period_balances (period, ledger_account, account_id, closing_micro_dzd)
     SELECT $4, ledger_account, account_id, closing
       FROM (${balancesAt({ period: 1, from: 2, to: 3 })}) AS balances`,
    [anchor.period, anchor.endsAt, row.ends_at, row.period],
  );
}
