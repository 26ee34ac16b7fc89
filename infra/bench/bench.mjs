/**
 * `pnpm bench`: the gateway measured side by side with a direct call to the upstream and with
 * Portkey's open-source gateway, in one run, on this machine. Run `pnpm run build` first.
 *
 * It starts PostgreSQL and RabbitMQ (packages/testing), billing, the dispatcher, the inference
 * worker and edge as processes from services/<name>/dist, a zero-latency fake OpenAI-compatible
 * upstream (infra/bench/upstream.mjs) and Portkey (installed on demand into .bench/portkey; its
 * column is skipped if that fails), all on 127.0.0.1; measures; prints a table with the issue's
 * targets; writes the raw figures to .bench/results/<timestamp>.json; stops everything it
 * started, also on Ctrl-C or failure. Service logs of the last run: .bench/logs/.
 *
 * Settings (environment; defaults in brackets):
 *   BENCH_PHASES            phases to run, comma-separated      [closed,open,stream,webhooks,ledger]
 *   BENCH_TARGETS           systems to drive in HTTP phases     [direct,portkey,gateway]
 *                           gateway-keyed (opt-in): the same gateway through a second account's
 *                           key with a daily budget and its own requests and tokens per minute,
 *                           measured in the closed loop's slices beside the plain key's (the
 *                           issue's "within 10 %")
 *   BENCH_CONNECTIONS       closed loop: connections            [10]
 *   BENCH_CLOSED_SECONDS    closed loop: seconds per target     [10]
 *   BENCH_CLOSED_SLICE_SECONDS  closed loop: the targets are measured in turn in slices of this
 *                           long, so that the host's changing load falls on each alike; 1 s
 *                           keeps the other three targets' slices under the 4 s the load client
 *                           keeps an idle socket, so no slice opens its connections again;
 *                           equal to BENCH_CLOSED_SECONDS, one after the other as before [1]
 *   BENCH_WARMUP_SECONDS    closed loop: unmeasured warm-up per target, long enough for V8 to
 *                           have optimised the request path (2 s left a third of the gateway's
 *                           measured CPU in its compiler threads; docs/benchmarks.md) [20]
 *   BENCH_OPEN_RATE         open loop: requests per second (issue 31's target rate) [200]
 *   BENCH_OPEN_SECONDS      open loop: seconds per target       [10]
 *   BENCH_OPEN_SLICE_SECONDS  open loop: the targets are measured in turn in slices of this
 *                           long, as in the closed loop, for the same reasons; equal to
 *                           BENCH_OPEN_SECONDS, one after the other as before [1]
 *   BENCH_OPEN_WARMUP_SECONDS  open loop: unmeasured warm-up per target at the same rate, so
 *                           that its figures do not depend on the closed phase having run
 *                           before it (cold, the gateway's p99 at 200 req/s was 14 times its
 *                           warm figure; docs/benchmarks.md) [5]
 *   BENCH_STREAM_REQUESTS   streaming: requests per target, one at a time   [30]
 *   BENCH_STREAM_CHUNKS     streaming: content chunks the upstream sends    [5]
 *   BENCH_STREAM_GAP_MS     streaming: milliseconds between those chunks    [20]
 *   BENCH_WEBHOOK_JOBS      webhooks: async jobs per run (10 at a time)    [500]
 *   BENCH_WEBHOOK_WARMUP_JOBS  webhooks: async jobs delivered, unmeasured, before the runs, so
 *                           that the first-attempt latency is not the dispatcher's cold start
 *                           (its first claims and secret reads; docs/benchmarks.md) [40]
 *   BENCH_WEBHOOK_SECONDS   webhooks: longest wait for the deliveries       [90]
 *   BENCH_WEBHOOK_TICK_MS   dispatcher tick [60000, the service's default; shortened to fit
 *                           BENCH_WEBHOOK_SECONDS - 20 s if that is less]
 *   BENCH_LEDGER_SECONDS    ledger: seconds per run of holds.mjs (16 accounts, then one) [10]
 *   BENCH_DIR               cache, logs and results directory (git-ignored) [.bench]
 *   BENCH_KEY_BUDGET        1: the bench key has a daily budget, checked on every admission
 *   BENCH_KEY_LIMITS        1: the bench key has its own requests and tokens per minute,
 *                           counted on every admission and given back on every settlement
 *   BENCH_ACCOUNTS          funded accounts (one key each) whose keys the gateway's requests
 *                           take in turn: 1 puts every admission and settlement on one
 *                           account's balance row, as one busy customer would [1]
 *   BENCH_HOLD_ENDS         ledger: the worker settles and voids in billing's database itself
 *                           (ADR 0070); api: over billing's API, as before it [ledger]
 *   BENCH_ADMISSIONS        direct: edge admits API keys in billing's database itself
 *                           (ADR 0070); api: over billing's API, as before it [direct]
 *   BENCH_JOBS              direct: edge hands synchronous jobs to the worker over HTTP
 *                           (ADR 0072); queue: through RabbitMQ, as before it [direct]
 *   BENCH_MALLOC            images: the four services run with the images' allocator settings
 *                           (Dockerfile, ADR 0071); default: glibc's own [images]
 *   BENCH_CPU_PROF          1: every service writes <BENCH_DIR>/profiles/<service>.cpuprofile
 *                           (node --cpu-prof); the services are stopped after the last phase so
 *                           that they do, and the report lists each one's 8 heaviest functions
 *                           by self time over its whole life (startup included) [0]
 *   BENCH_SQL_PROFILE       1: PostgreSQL times every function and every statement run inside
 *                           one, with its planning; the report lists, per request of the
 *                           gateway's closed and open loops, the heaviest statements (calls,
 *                           plans per call, planning and execution ms per call) and the
 *                           functions by self time [0]
 *
 * CPU per request is utime+stime from /proc/<pid>/stat over a phase divided by its answered
 * requests (10 ms clock ticks: short phases are coarse); memory is VmRSS after the last phase.
 * In the closed and open loops the gateway's components are also counted, per answered request,
 * from their own counters (counters/): PostgreSQL transactions (pg_stat_database) and statements
 * (pg_stat_statements, preloaded in the bench's cluster only), RabbitMQ messages published,
 * delivered, acknowledged and confirmed (the broker's global counters), and the internal calls
 * billing answered by route and caller (its http request histogram). That reading waits twice
 * 11 s per gateway run for PostgreSQL to publish its counts. No test asserts any of these figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closedPhase, openPhase, streamPhase } from './phases/http.mjs';
import { ledgerPhase } from './phases/ledger.mjs';
import { startReceiver, webhookPhase } from './phases/webhooks.mjs';
import { installPortkey, startPortkey, PORTKEY_VERSION } from './portkey.mjs';
import { rssBytes, withChildren } from './proc.mjs';
import { serviceTopFunctions } from './profiles.mjs';
import { COUNTER_FOOTNOTE, renderProfiles, renderSqlProfile, renderTable } from './report.mjs';
import { startBenchStack } from './stack.mjs';
import { createCleanup, machineFacts, readSettings, runBench } from './settings.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const settings = readSettings(process.env, root);
const cleanup = createCleanup();
const log = (message) => console.log(`[bench] ${message}`);

async function startPortkeyTarget(upstreamUrl) {
  try {
    const entry = await installPortkey(path.join(settings.dir, 'portkey'));
    const portkey = await startPortkey(entry);
    cleanup.push(() => cleanup.stopChild(portkey.child));
    return {
      name: 'portkey',
      url: portkey.url,
      path: '/v1/chat/completions',
      headers: {
        authorization: 'Bearer bench',
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': `${upstreamUrl}/v1`,
      },
      processes: { portkey: () => [portkey.pid] },
    };
  } catch (error) {
    log(`Portkey column skipped: ${error.message.split('\n')[0]}`);
    return undefined;
  }
}

async function startEverything() {
  const logDir = path.join(settings.dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const stack = await startBenchStack({
    cleanup,
    logDir,
    upstreamStream: { chunks: settings.streamChunks, gapMs: settings.streamGapMs },
    dispatchIntervalMs: settings.webhookTickMs,
    keyBudget: settings.keyBudget,
    keyLimits: settings.keyLimits,
    keyedTarget: settings.targets.includes('gateway-keyed'),
    accounts: settings.accounts,
    holdEnds: settings.holdEnds,
    admissions: settings.admissions,
    jobs: settings.jobs,
    sqlProfile: settings.sqlProfile,
    log,
  });
  const { infra, upstream } = stack;
  const portkey = settings.targets.includes('portkey')
    ? await startPortkeyTarget(upstream.baseUrl)
    : undefined;
  const targets = [
    {
      name: 'direct',
      url: upstream.baseUrl,
      path: '/v1/chat/completions',
      headers: {},
      processes: { upstream: () => [upstream.child.pid] },
    },
    portkey,
    stack.gateway,
    stack.gatewayKeyed,
  ].filter((target) => target && settings.targets.includes(target.name));
  const infraPids = {
    postgres: () => withChildren(infra.pids.postgres),
    rabbitmq: () => [infra.pids.rabbitmq],
  };
  return { ...stack, targets, infraPids };
}

/** A service's V8 heap in use and reserved, from its Prometheus default metrics. */
async function heapFigures(baseUrl) {
  try {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const gauge = (metric) =>
      Number(new RegExp(`^${metric}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
    return {
      usedBytes: gauge('nodejs_heap_size_used_bytes'),
      totalBytes: gauge('nodejs_heap_size_total_bytes'),
    };
  } catch {
    return undefined;
  }
}

async function runPhases(stack) {
  const { targets, infraPids } = stack;
  const results = {};
  const phase = async (name, run) => {
    if (!settings.phases.includes(name)) return;
    if (cleanup.stopping()) throw new Error(`interrupted before phase ${name}`);
    log(`phase ${name}`);
    results[name] = await run();
  };
  await phase('closed', () =>
    closedPhase(targets, infraPids, {
      connections: settings.connections,
      seconds: settings.closedSeconds,
      warmupSeconds: settings.warmupSeconds,
      sliceSeconds: settings.closedSliceSeconds,
    }),
  );
  await phase('open', () =>
    openPhase(targets, infraPids, {
      ratePerS: settings.openRate,
      seconds: settings.openSeconds,
      warmupSeconds: settings.openWarmupSeconds,
      sliceSeconds: settings.openSliceSeconds,
    }),
  );
  await phase('stream', () => streamPhase(targets, infraPids, { count: settings.streamRequests }));
  await phase('webhooks', async () => {
    const receiver = await startReceiver(stack.certs);
    cleanup.push(() => receiver.close());
    return webhookPhase({
      edgeUrl: stack.services.edge.baseUrl,
      apiKey: stack.apiKey,
      upstream: stack.upstream,
      receiver,
      jobs: settings.webhookJobs,
      warmupJobs: settings.webhookWarmupJobs,
      connections: 10,
      waitS: settings.webhookSeconds,
      tickMs: settings.webhookTickMs,
      dispatcherPid: stack.services.dispatcher.child.pid,
    });
  });
  results.memory = Object.fromEntries(
    targets
      .filter((t) => t.name !== 'direct')
      .map((t) => [
        t.name,
        Object.fromEntries(
          Object.entries(t.processes).map(([name, pids]) => [name, rssBytes(pids()[0])]),
        ),
      ]),
  );
  // What V8 holds of that resident size: live objects vs reserved heap (GC slack, young space).
  results.heap = Object.fromEntries(
    await Promise.all(
      ['edge', 'billing', 'worker', 'dispatcher'].map(async (name) => [
        name,
        await heapFigures(stack.services[name].baseUrl),
      ]),
    ),
  );
  // Last: it writes straight to billing's tables as their owner.
  await phase('ledger', () =>
    ledgerPhase(stack.services.billingOwnerUrl, { seconds: settings.ledgerSeconds }),
  );
  return results;
}

const PROFILE_TOP_FUNCTIONS = 8;
/** The services, by the name of their .cpuprofile, in the order cleanup stops them. */
const PROFILED_SERVICES = ['edge', 'worker', 'dispatcher', 'billing'];

/**
 * BENCH_CPU_PROF=1: node writes a profile when its process exits, so the four services are
 * stopped here, after the last phase, and their heaviest functions read back.
 */
async function profileTopFunctions(services, sinceMs) {
  for (const name of PROFILED_SERVICES) await cleanup.stopChild(services[name].child);
  return serviceTopFunctions(
    path.join(settings.dir, 'profiles'),
    PROFILED_SERVICES,
    sinceMs,
    PROFILE_TOP_FUNCTIONS,
  );
}

async function main() {
  const startedAt = new Date();
  const machineBefore = machineFacts();
  const stack = await startEverything();
  const results = await runPhases(stack);
  if (settings.cpuProfiles) {
    results.profiles = await profileTopFunctions(stack.services, startedAt.getTime());
  }
  const machine = { ...machineBefore, loadAverageAfter: os.loadavg() };
  const report = { startedAt: startedAt.toISOString(), machine, settings, results };
  const file = path.join(
    settings.dir,
    'results',
    `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`,
  );
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${renderTable(results, { ...settings, portkeyVersion: PORTKEY_VERSION })}\n`);
  if (results.closed?.gateway?.counters || results.open?.gateway?.counters) {
    console.log(`${COUNTER_FOOTNOTE}\n`);
  }
  if (results.profiles) console.log(`${renderProfiles(results.profiles)}\n`);
  if (settings.sqlProfile) console.log(`${renderSqlProfile(results)}\n`);
  console.log(
    `${machine.cpus}× ${machine.cpuModel}, Node ${process.version}; load average ${machine.loadAverage.map((l) => l.toFixed(2)).join(' ')} before, ${machine.loadAverageAfter.map((l) => l.toFixed(2)).join(' ')} after (above ~0.5 before: someone else is using the CPU, figures disturbed)`,
  );
  console.log(`raw figures: ${path.relative(process.cwd(), file)}`);
}

await runBench(cleanup, main);
