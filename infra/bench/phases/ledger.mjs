/**
 * Ledger hold+settle cycles per second: runs services/billing/bench/holds.mjs (the billing
 * package's own benchmark) against the bench's billing database, as its owner, with 16 accounts
 * and then with one, and checks the ledger's invariants after each; then the same at batch scale:
 * 256 requests in flight whose admissions are batched as edges send them.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const script = path.resolve(
  path.dirname(new URL(import.meta.url).pathname),
  '../../../services/billing/bench/holds.mjs',
);

async function holds(databaseUrl, { accounts, seconds, concurrency = 16, batched = false }) {
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      BENCH_CONCURRENCY: String(concurrency),
      BENCH_POOL_MAX: '18',
      BENCH_BATCH: batched ? '1' : '0',
      BENCH_ACCOUNTS: String(accounts),
      BENCH_CYCLES: '1000000',
      BENCH_MAX_SECONDS: String(seconds),
      BENCH_CHECK: '1',
      BENCH_JSON: '1',
    },
    timeout: (seconds + 120) * 1000,
  }).catch((error) => ({ stdout: error.stdout ?? '', error }));
  const line = stdout.split('\n').find((text) => text.startsWith('{'));
  if (!line) throw new Error(`holds.mjs printed no figures:\n${stdout}`);
  return JSON.parse(line);
}

export async function ledgerPhase(databaseUrl, { seconds }) {
  return {
    accounts16: await holds(databaseUrl, { accounts: 16, seconds }),
    account1: await holds(databaseUrl, { accounts: 1, seconds }),
    // At batch scale: 256 requests in flight, admitted as edges batch them.
    batched16: await holds(databaseUrl, { accounts: 16, seconds, concurrency: 256, batched: true }),
    batched1: await holds(databaseUrl, { accounts: 1, seconds, concurrency: 256, batched: true }),
  };
}
