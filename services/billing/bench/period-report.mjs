/**
 * How long finance's period report takes on a busy ledger: seeds months of settlements (two
 * ledger entries each, their holds and transactions) spread over many accounts and three models
 * into a migrated, throwaway billing database, then times September's report read from every
 * entry since the ledger began, closes the months before it (their balances carried forward),
 * and times the same report again, now opening from August's close, side by side; each report
 * runs twice (the second with a warm cache) and the two must be equal.
 *
 *   pnpm run build
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench node services/billing/dist/db/migrate-cli.js
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench node services/billing/bench/period-report.mjs
 *
 * Settings: BENCH_ENTRIES (ledger entries a month, default 1,000,000), BENCH_MONTHS (months
 * seeded, ending with September 2026, default 4), BENCH_ACCOUNTS (default 1,000). Seeding writes
 * as the database's owner with triggers off for its session: the rows are built to balance, and
 * nothing else runs on this database. Loopback only.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { isDeepStrictEqual } from 'node:util';
import { PeriodRepository, createReports } from '../dist/reports/index.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl)
  throw new Error('DATABASE_URL (a migrated, throwaway billing database) is required');
const host = new URL(databaseUrl).hostname;
if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) {
  throw new Error(`refusing a non-loopback database (${host})`);
}
const entries = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
const months = Number(process.env.BENCH_MONTHS ?? 4);
const accounts = Number(process.env.BENCH_ACCOUNTS ?? 1_000);
const settlements = Math.floor(entries / 2);
const MONTH = { from: '2026-09-01', to: '2026-09-30' };
/** The seeded months, oldest first, ending with September 2026 (YYYY-MM). */
const SEEDED = Array.from({ length: months }, (_, i) =>
  new Date(Date.UTC(2026, 8 - (months - 1 - i), 1)).toISOString().slice(0, 7),
);

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
    for (const month of SEEDED) await seedMonth(client, month);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  await pool.query('ANALYZE');
}

/** One settlement every few seconds across the month (Africa/Algiers), 0.0005 DZD each. */
async function seedMonth(client, month) {
  const spread = `(($3 || '-01')::timestamp AT TIME ZONE 'Africa/Algiers')
                  + (g * ((($3 || '-01')::date + interval '1 month' - ($3 || '-01')::date) / ($1 + 1)))`;
  const id = (prefix) => `'${prefix}-' || $3 || '-' || g`;
  const params = [settlements, accounts, month];
  await client.query(
    `INSERT INTO holds (id, account_id, amount_micro_dzd, status, settled_amount_micro_dzd,
                        model, priority, expires_at, created_at, finalized_at)
     SELECT ${id('bench-h')}, 'bench-acct-' || (1 + g % $2), 1000, 'settled', 500,
            'bench/model-' || (g % 3), g % 10 = 0, ${spread} + interval '1 hour', ${spread},
            ${spread}
       FROM generate_series(1, $1) g`,
    params,
  );
  await client.query(
    `INSERT INTO ledger_transactions (id, kind, account_id, hold_id, created_at)
     SELECT ${id('bench-t')}, 'hold_settlement', 'bench-acct-' || (1 + g % $2), ${id('bench-h')},
            ${spread}
       FROM generate_series(1, $1) g`,
    params,
  );
  await client.query(
    `INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                 created_at)
     SELECT ${id('bench-t')}, leg.account, leg.account_id, leg.amount, ${spread}
       FROM generate_series(1, $1) g,
            LATERAL (VALUES ('customer:bench-acct-' || (1 + g % $2), 'bench-acct-' || (1 + g % $2), -500::bigint),
                            ('system:revenue', NULL, 500::bigint)) AS leg(account, account_id, amount)`,
    params,
  );
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
  `seeded ${settlements * 2 * months} entries (${months} months, ${settlements * 2} a month) ` +
    `over ${accounts} accounts in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
);
const { reports, periods } = createReports(pool, 'Africa/Algiers', () => new Date());

async function septemberTwice(label) {
  let report;
  for (const run of ['cold', 'warm']) {
    report = await timed(`report, ${label} (${run})`, () => reports.report({ ...MONTH }));
    if (!Object.values(report.checks).every(Boolean)) throw new Error('a check failed');
  }
  return report;
}

const fromEveryEntry = await septemberTwice('from every entry');
for (const month of SEEDED.slice(0, -1)) {
  await timed(`close ${month}`, () => periods.close(month, { closed_by: 'bench' }));
}
const fromClose = await septemberTwice(`opening from ${SEEDED.at(-2) ?? 'no'} close`);
if (!isDeepStrictEqual(fromEveryEntry, fromClose)) {
  throw new Error('the report read from the close differs from the one read from every entry');
}
await timed('entries digest (a close)', () =>
  new PeriodRepository(pool).entriesDigest(
    new Date(fromClose.period.starts_at),
    new Date(fromClose.period.ends_at),
  ),
);
const violations = await timed('closed months checked (balances and figures recomputed)', () =>
  periods.violations(),
);
if (violations.length > 0) throw new Error(`closed months: ${violations.join('; ')}`);
await pool.end();
