/** Settings from the environment, the machine's description, and the run's cleanup stack. */
import os from 'node:os';
import path from 'node:path';

const PHASES = ['closed', 'open', 'stream', 'webhooks', 'ledger'];
const TARGETS = ['direct', 'portkey', 'gateway'];
// gateway-keyed: the same gateway, through a key with a budget and its own limits; opt-in.
const KNOWN_TARGETS = [...TARGETS, 'gateway-keyed'];
const DEFAULT_TICK_MS = 60_000; // the dispatcher's default DISPATCH_INTERVAL_MS
const STOP_TIMEOUT_MS = 15_000;

function integer(env, name, fallback, min, max) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function list(env, name, allowed, fallback = allowed) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const unknown = items.filter((item) => !allowed.includes(item));
  if (unknown.length > 0)
    throw new Error(`${name}: unknown ${unknown.join(', ')} (known: ${allowed.join(', ')})`);
  return items;
}

export function readSettings(env, root) {
  const webhookSeconds = integer(env, 'BENCH_WEBHOOK_SECONDS', 90, 5, 900);
  // Today's tick unless the wait could not cover one tick plus submitting and delivering.
  const fittingTickMs = Math.min(DEFAULT_TICK_MS, Math.max(1000, (webhookSeconds - 20) * 1000));
  return {
    phases: list(env, 'BENCH_PHASES', PHASES),
    targets: list(env, 'BENCH_TARGETS', KNOWN_TARGETS, TARGETS),
    connections: integer(env, 'BENCH_CONNECTIONS', 10, 1, 256),
    closedSeconds: integer(env, 'BENCH_CLOSED_SECONDS', 10, 1, 300),
    closedSliceSeconds: integer(env, 'BENCH_CLOSED_SLICE_SECONDS', 1, 1, 300),
    warmupSeconds: integer(env, 'BENCH_WARMUP_SECONDS', 20, 0, 300),
    openRate: integer(env, 'BENCH_OPEN_RATE', 200, 1, 5000),
    openSeconds: integer(env, 'BENCH_OPEN_SECONDS', 10, 1, 300),
    openSliceSeconds: integer(env, 'BENCH_OPEN_SLICE_SECONDS', 1, 1, 300),
    openWarmupSeconds: integer(env, 'BENCH_OPEN_WARMUP_SECONDS', 5, 0, 300),
    streamRequests: integer(env, 'BENCH_STREAM_REQUESTS', 30, 1, 1000),
    streamChunks: integer(env, 'BENCH_STREAM_CHUNKS', 5, 2, 100),
    streamGapMs: integer(env, 'BENCH_STREAM_GAP_MS', 20, 1, 1000),
    webhookJobs: integer(env, 'BENCH_WEBHOOK_JOBS', 500, 1, 100_000),
    webhookWarmupJobs: integer(env, 'BENCH_WEBHOOK_WARMUP_JOBS', 40, 0, 10_000),
    webhookSeconds,
    webhookTickMs: integer(env, 'BENCH_WEBHOOK_TICK_MS', fittingTickMs, 5, 600_000),
    ledgerSeconds: integer(env, 'BENCH_LEDGER_SECONDS', 10, 1, 600),
    keyBudget: env.BENCH_KEY_BUDGET === '1',
    keyLimits: env.BENCH_KEY_LIMITS === '1',
    accounts: integer(env, 'BENCH_ACCOUNTS', 1, 1, 64),
    holdEnds: list(env, 'BENCH_HOLD_ENDS', ['ledger', 'api'])[0] ?? 'ledger',
    admissions: list(env, 'BENCH_ADMISSIONS', ['direct', 'api'])[0] ?? 'direct',
    jobs: list(env, 'BENCH_JOBS', ['direct', 'queue'])[0] ?? 'direct',
    malloc: list(env, 'BENCH_MALLOC', ['images', 'default'])[0] ?? 'images',
    cpuProfiles: env.BENCH_CPU_PROF === '1',
    sqlProfile: env.BENCH_SQL_PROFILE === '1',
    dir: path.resolve(root, env.BENCH_DIR ?? '.bench'),
  };
}

export function machineFacts() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    loadAverage: os.loadavg(),
  };
}

/**
 * What the run started, stopped in reverse order exactly once: at the end, on failure, or on
 * SIGINT/SIGTERM/SIGHUP. A step that hangs is abandoned after STOP_TIMEOUT_MS.
 */
export function createCleanup() {
  const steps = [];
  let running;
  const withTimeout = (promise) =>
    Promise.race([promise, new Promise((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS).unref())]);
  const cleanup = {
    push: (step) => steps.push(step),
    /** True once stopping began: the phases end there rather than drive stopped services. */
    stopping: () => running !== undefined,
    run: () => {
      running ??= (async () => {
        for (const step of steps.reverse()) {
          await withTimeout(Promise.resolve().then(step)).catch((error) =>
            console.error(`[bench] cleanup: ${error.message}`),
          );
        }
      })();
      return running;
    },
    /** SIGTERM, then SIGKILL if the child outlives the timeout. */
    stopChild: (child) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS - 1000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
    onSignals: () => {
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
        process.once(signal, () => {
          console.error(`\n[bench] ${signal}: stopping everything the bench started`);
          void cleanup.run().then(() => process.exit(130));
        });
      }
    },
  };
  return cleanup;
}

/** Runs `main`, then stops everything it started, also on Ctrl-C or failure. */
export async function runBench(cleanup, main) {
  cleanup.onSignals();
  try {
    await main();
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await cleanup.run();
  }
}
