/**
 * Closed periods: the digest of a period's entries, and the `ledger_periods` rows (inserted
 * once, never changed). The digest is SHA-256 over one line per entry (id, transaction, ledger
 * account, amount, time in UTC to the millisecond), in id order, computed by PostgreSQL.
 */
import type pg from 'pg';
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

  /** False when the period was closed already (the first close stands). */
  async insert(row: ClosedPeriodRow): Promise<boolean> {
    const { rowCount } = await this.pool.query(
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
    return rowCount === 1;
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
