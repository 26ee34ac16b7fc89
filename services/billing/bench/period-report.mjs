/**
 * How long finance's period report takes on a busy month: seeds a month of settlements (two
 * ledger entries each, their holds and transactions) spread over many accounts and three models
 * into a migrated, throwaway billing database, then times the report and a close's entries
 * digest, each run twice (the second with a warm cache).
 *
 *   pnpm run build
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench node services/billing/dist/db/migrate-cli.js
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench node services/billing/bench/period-report.mjs
 *
 * Settings: BENCH_ENTRIES (ledger entries in the month, default 1,000,000), BENCH_ACCOUNTS
 * (default 1,000). Seeding writes as the database's owner with triggers off for its session:
 * the rows are built to balance, and nothing else runs on this database. Loopback only.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { PeriodRepository, PeriodReports, ReportRepository } from '../dist/reports/index.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl)
  throw new Error('DATABASE_URL (a migrated, throwaway billing database) is required');
const host = new URL(databaseUrl).hostname;
if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) {
  throw new Error(`refusing a non-loopback database (${host})`);
}
const entries = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
const accounts = Number(process.env.BENCH_ACCOUNTS ?? 1_000);
const settlements = Math.floor(entries / 2);
const MONTH = { from: '2026-09-01', to: '2026-09-30' };

const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });

async function seed() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(
      `INSERT INTO accounts (id, name) SELECT 'bench-acct-' || g, 'Bench ' || g
         FROM generate_series(1, $1) g`,
      [accounts],
    );
    // One settlement every few seconds across September (Africa/Algiers), 0.0005 DZD each.
    const spread = `timestamptz '2026-08-31T23:00:00Z' + (g * (interval '30 days' / $1))`;
    await client.query(
      `INSERT INTO holds (id, account_id, amount_micro_dzd, status, settled_amount_micro_dzd,
                          model, priority, expires_at, created_at, finalized_at)
       SELECT 'bench-h-' || g, 'bench-acct-' || (1 + g % $2), 1000, 'settled', 500,
              'bench/model-' || (g % 3), g % 10 = 0, ${spread} + interval '1 hour', ${spread},
              ${spread}
         FROM generate_series(1, $1) g`,
      [settlements, accounts],
    );
    await client.query(
      `INSERT INTO ledger_transactions (id, kind, account_id, hold_id, created_at)
       SELECT 'bench-t-' || g, 'hold_settlement', 'bench-acct-' || (1 + g % $2), 'bench-h-' || g,
              ${spread}
         FROM generate_series(1, $1) g`,
      [settlements, accounts],
    );
    await client.query(
      `INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                   created_at)
       SELECT 'bench-t-' || g, leg.account, leg.account_id, leg.amount, ${spread}
         FROM generate_series(1, $1) g,
              LATERAL (VALUES ('customer:bench-acct-' || (1 + g % $2), 'bench-acct-' || (1 + g % $2), -500::bigint),
                              ('system:revenue', NULL, 500::bigint)) AS leg(account, account_id, amount)`,
      [settlements, accounts],
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  await pool.query('ANALYZE');
}

async function timed(label, work) {
  const started = performance.now();
  const result = await work();
  console.log(`${label}: ${((performance.now() - started) / 1000).toFixed(2)} s`);
  return result;
}

const seedStarted = performance.now();
await seed();
console.log(
  `seeded ${settlements * 2} entries over ${accounts} accounts in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
);
const reports = new PeriodReports(new ReportRepository(pool), 'Africa/Algiers');
const periods = new PeriodRepository(pool);
for (const run of ['cold', 'warm']) {
  const report = await timed(`report (${run})`, () => reports.report({ ...MONTH }));
  if (!Object.values(report.checks).every(Boolean)) throw new Error('a check failed');
  await timed(`entries digest (${run})`, () =>
    periods.entriesDigest(new Date(report.period.starts_at), new Date(report.period.ends_at)),
  );
}
await pool.end();
