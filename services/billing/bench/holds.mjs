/**
 * Throughput of the admission → settle cycle against a real, migrated PostgreSQL database: each
 * hold is placed the way `/admissions` places it (API key → one `billing_admit` round trip:
 * key, rate limit, model, balance, hold), then settled (`ledger_settle_holds`, batched).
 *
 * Starts nothing itself. Use a throwaway database: the ledger is append-only, so the accounts,
 * holds and journal entries this creates stay there.
 *
 *   pnpm run build                                          # from the repository root
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench node services/billing/dist/db/migrate-cli.js
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench node services/billing/bench/holds.mjs
 *
 * Settings (environment):
 *   BENCH_CONCURRENCY  concurrent workers, each looping hold → settle          (default 16)
 *   BENCH_CYCLES       hold+settle cycles in total                             (default 5000)
 *   BENCH_MAX_SECONDS  stop early after this long                              (default 60)
 *   BENCH_ACCOUNTS     accounts the workers share (1 = all contend on one row) (default = concurrency)
 *   BENCH_POOL_MAX     connections in the pool                                 (default concurrency + 2)
 *   BENCH_CHECK        1: run checkInvariants() at the end                     (default 0)
 *   BENCH_BATCH        1: admissions batched as edge sends them (NaturalBatcher over
 *                      admitMany, 32 per statement, 2 in flight), so many workers share one
 *                      transaction per batch; settlements are batched by the ledger either way
 *                                                                             (default 0)
 *   BENCH_JSON         1: print the figures as one JSON line instead (`pnpm bench` reads it)
 *
 * Prints `holds+settles per second: X` (completed cycles per second) and p50/p99 latency of
 * one cycle. Loopback databases only.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createPrismaClient } from '../dist/db/client.js';
import { createIdentity } from '../dist/identity/index.js';
import { createLedgerService } from '../dist/ledger/index.js';
import { Keyring } from '@gateway/crypto';
import { NaturalBatcher } from '@gateway/runtime';

const MODEL = 'bench/echo-model';
const HOLD_MICRO_DZD = 10_000n; // 0.01 DZD worst case per request
const USAGE = { inputTokens: 120, outputTokens: 40 };

function setting(name, fallback, { min = 1, max = Number.MAX_SAFE_INTEGER } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}`);
  }
  return value;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL (a migrated billing database) is required');
const host = new URL(databaseUrl).hostname;
if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) {
  throw new Error(`refusing to benchmark a non-loopback database (${host})`);
}

const concurrency = setting('BENCH_CONCURRENCY', 16, { max: 256 });
const cycles = setting('BENCH_CYCLES', 5000, { max: 1_000_000 });
const maxSeconds = setting('BENCH_MAX_SECONDS', 60, { max: 3600 });
const accountCount = setting('BENCH_ACCOUNTS', concurrency, { max: 10_000 });
const poolMax = setting('BENCH_POOL_MAX', concurrency + 2, { max: 200 });
const check = process.env.BENCH_CHECK === '1';
const json = process.env.BENCH_JSON === '1';

const prisma = createPrismaClient(databaseUrl, {
  maxConnections: poolMax,
  connectionTimeoutMs: 30_000,
});
const ledger = createLedgerService({ prisma, clock: () => new Date() });
const identity = createIdentity({
  prisma,
  keyring: Keyring.parse(randomBytes(32).toString('base64')),
  holdTtlMs: 60_000,
});
const ESTIMATE = { inputTokens: 120, maxOutputTokens: 40 };
const batched = process.env.BENCH_BATCH === '1';
const batches = new NaturalBatcher((items) => identity.admission.admitMany(items), {
  maxBatchSize: 32,
  maxInFlight: 2,
});
/** One admission: alone, or in whatever batch is forming (BENCH_BATCH=1). */
const admit = (authorization, request) =>
  batched
    ? batches.submit({ authorization, request })
    : identity.admission.admit(authorization, request);

try {
  await prisma.model.upsert({
    where: { id: MODEL },
    create: {
      id: MODEL,
      kind: 'chat',
      provider: 'node',
      upstreamModel: 'echo',
      inputPriceMicroDzdPerM: 2_000_000n,
      outputPriceMicroDzdPerM: 6_000_000n,
      maxOutputTokens: 4096,
    },
    update: {},
  });
  const run = randomBytes(4).toString('hex');
  const accounts = [];
  for (let i = 0; i < accountCount; i += 1) {
    const { id } = await identity.accounts.create({ name: `bench ${run} ${i}` });
    await identity.accounts.patch(id, { rateLimitPerMinute: 100_000 });
    const { key } = await identity.accounts.createApiKey(id, { name: 'bench' });
    await ledger.credit({
      accountId: id,
      amountMicroDzd: HOLD_MICRO_DZD * BigInt(cycles),
      reference: `benchmark ${run}`,
    });
    accounts.push({ id, authorization: `Bearer ${key}` });
  }

  const latencies = [];
  const failures = new Map();
  let started = 0;
  const deadline = performance.now() + maxSeconds * 1000;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const account = accounts[worker % accounts.length];
      while (started < cycles && performance.now() < deadline) {
        started += 1;
        const t0 = performance.now();
        try {
          const { admission } = await admit(account.authorization, {
            model: MODEL,
            estimate: ESTIMATE,
            priority: false,
            holdId: `hold_bench_${run}_${started}`,
          });
          const hold = admission.hold;
          await ledger.settleHold(hold.id, USAGE);
          latencies.push(performance.now() - t0);
        } catch (error) {
          const key = error?.code ?? error?.message ?? String(error);
          failures.set(key, (failures.get(key) ?? 0) + 1);
        }
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  latencies.sort((a, b) => a - b);

  // Settle alone: as many holds placed beforehand, then settled by the same number of workers.
  const settlesPerSecond = await settleAlone(latencies.length, accounts, run);
  const invariants = check ? await ledger.checkInvariants() : undefined;
  const figures = {
    cycles: latencies.length,
    seconds,
    concurrency,
    batched,
    accounts: accountCount,
    pool: poolMax,
    perSecond: latencies.length / seconds,
    settlesPerSecond,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    failures: Object.fromEntries(failures),
    invariantsOk: invariants?.ok,
  };
  if (json) console.log(JSON.stringify(figures));
  else printFigures(figures, invariants);
  if (invariants && !invariants.ok) process.exitCode = 1;
  if (failures.size > 0) process.exitCode = 1;
} finally {
  await prisma.$disconnect();
}

async function settleAlone(count, accounts, run) {
  const pendingHolds = [];
  for (let i = 0; i < count; i += 1) {
    const account = accounts[i % accounts.length];
    const { admission } = await identity.admission.admit(account.authorization, {
      model: MODEL,
      estimate: ESTIMATE,
      priority: false,
      holdId: `hold_bench_${run}_alone_${i}`,
    });
    pendingHolds.push(admission.hold);
  }
  let next = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < pendingHolds.length) {
        const hold = pendingHolds[next];
        next += 1;
        await ledger.settleHold(hold.id, USAGE);
      }
    }),
  );
  return pendingHolds.length / ((performance.now() - begin) / 1000);
}

function printFigures(figures, invariants) {
  console.log(
    `cycles: ${figures.cycles} in ${figures.seconds.toFixed(2)} s; concurrency ${figures.concurrency}, ` +
      `accounts ${figures.accounts}, pool ${figures.pool}${figures.batched ? ', batched' : ''}`,
  );
  console.log(`holds+settles per second: ${figures.perSecond.toFixed(1)}`);
  console.log(
    `settles per second (holds placed beforehand): ${figures.settlesPerSecond.toFixed(1)}`,
  );
  console.log(
    `latency per hold+settle: p50 ${figures.p50Ms.toFixed(2)} ms, ` +
      `p99 ${figures.p99Ms.toFixed(2)} ms`,
  );
  if (Object.keys(figures.failures).length > 0) console.log('failures:', figures.failures);
  if (invariants)
    console.log(`invariants: ${invariants.ok ? 'ok' : invariants.violations.join('\n')}`);
}
