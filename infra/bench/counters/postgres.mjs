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
  /**
   * calls per normalised statement text (the text identifies it across readings). Top-level
   * statements only, each one round trip: with BENCH_SQL_PROFILE those run inside functions are
   * tracked too.
   */
  const statements = async () => {
    const { rows } = await client.query(
      `SELECT s.query, sum(s.calls)::bigint AS calls FROM pg_stat_statements s
         JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = ANY($1) AND s.toplevel GROUP BY s.query`,
      [databases],
    );
    return new Map(rows.map((row) => [row.query, Number(row.calls)]));
  };
  return {
    transactions,
    statements,
    sqlProfile: () => readSqlProfile(client, adminUrl, databases),
    close: () => client.end(),
  };
}

/**
 * BENCH_SQL_PROFILE: every statement (nested ones too) with its calls, plans and times, and each
 * database's functions with their calls and self times (pg_stat_user_functions shows
 * only the database it is read in). Times in ms, cumulative since the server started.
 */
async function readSqlProfile(client, adminUrl, databases) {
  const { rows } = await client.query(
    `SELECT s.query, s.toplevel, sum(s.calls)::bigint AS calls, sum(s.plans)::bigint AS plans,
            sum(s.total_plan_time) AS plan_ms, sum(s.total_exec_time) AS exec_ms
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = ANY($1) GROUP BY s.query, s.toplevel`,
    [databases],
  );
  const statements = new Map(
    rows.map((row) => [
      `${row.toplevel ? '' : '(nested) '}${row.query.replace(/\s+/g, ' ')}`,
      {
        calls: Number(row.calls),
        plans: Number(row.plans),
        planMs: row.plan_ms,
        execMs: row.exec_ms,
      },
    ]),
  );
  const functions = new Map();
  for (const database of databases) {
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    try {
      const { rows: fns } = await db.query(
        'SELECT funcname, calls, self_time FROM pg_stat_user_functions',
      );
      for (const f of fns) {
        functions.set(f.funcname, { calls: Number(f.calls), selfMs: f.self_time });
      }
    } finally {
      await db.end();
    }
  }
  return { statements, functions };
}

const SQL_PROFILE_TOP = 12;

/** Two SQL profile readings → the heaviest statements and functions of the interval, per request. */
export function sqlProfileDelta(before, after, requests) {
  const delta = (map, key, fields) => {
    const was = before[map].get(key);
    const now = after[map].get(key);
    return Object.fromEntries(fields.map((field) => [field, now[field] - (was?.[field] ?? 0)]));
  };
  const statements = [...after.statements.keys()]
    .map((query) => ({
      query,
      ...delta('statements', query, ['calls', 'plans', 'planMs', 'execMs']),
    }))
    .filter((s) => s.calls > 0)
    .sort((a, b) => b.planMs + b.execMs - (a.planMs + a.execMs))
    .slice(0, SQL_PROFILE_TOP)
    .map((s) => ({
      query: s.query.slice(0, 120),
      callsPerRequest: s.calls / requests,
      plansPerCall: s.plans / s.calls,
      planMsPerCall: s.planMs / s.calls,
      execMsPerCall: s.execMs / s.calls,
    }));
  const functions = [...after.functions.keys()]
    .map((name) => ({ name, ...delta('functions', name, ['calls', 'selfMs']) }))
    .filter((f) => f.calls > 0)
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, SQL_PROFILE_TOP)
    .map((f) => ({
      name: f.name,
      callsPerRequest: f.calls / requests,
      selfMsPerRequest: f.selfMs / requests,
    }));
  return { statements, functions };
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
