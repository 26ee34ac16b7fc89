/**
 * PostgreSQL's own counters for the gateway's databases: transactions from pg_stat_database and
 * statements (one per round trip: BEGIN and COMMIT count too) from pg_stat_statements, which the
 * bench's cluster preloads (packages/testing's `statementStatistics`).
 */
import pg from 'pg';

/**
 * A backend publishes its transaction counts at most once a second while busy, and the rest 10 s
 * after it goes idle (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): reading xact_commit sooner than this
 * after the last query would miss some.
 */
export const STATS_PUBLISHED_AFTER_MS = 11_000;
const TOP_STATEMENTS = 10;

export async function connectPostgresCounters(adminUrl, databases) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  // In the admin database: the bench's own queries never land in the gateway's databases.
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const transactions = async () => {
    const { rows } = await client.query(
      `SELECT sum(xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database
        WHERE datname = ANY($1)`,
      [databases],
    );
    return Number(rows[0].n);
  };
  /** calls per normalised statement text (the text identifies it across readings). */
  const statements = async () => {
    const { rows } = await client.query(
      `SELECT s.query, sum(s.calls)::bigint AS calls FROM pg_stat_statements s
         JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ANY($1) GROUP BY s.query`,
      [databases],
    );
    return new Map(rows.map((row) => [row.query, Number(row.calls)]));
  };
  return { transactions, statements, close: () => client.end() };
}

/** Statements between two readings: the total, and the most frequent with their counts. */
export function statementDelta(before, after) {
  const counts = [...after]
    .map(([query, calls]) => [query, calls - (before.get(query) ?? 0)])
    .filter(([, calls]) => calls > 0);
  return {
    total: counts.reduce((sum, [, calls]) => sum + calls, 0),
    top: counts
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_STATEMENTS)
      .map(([query, calls]) => ({ query: query.replace(/\s+/g, ' ').slice(0, 160), calls })),
  };
}
