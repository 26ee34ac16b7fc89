/**
 * The deployed shape, started the way the tests start real servers: PostgreSQL and RabbitMQ
 * from packages/testing, billing's database cloned from its migrated template (billing runs as
 * its runtime role), the four services as processes from services/<name>/dist, and the fake
 * upstream as a process of its own. Everything listens on 127.0.0.1.
 */
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createIsolatedDatabase,
  createTestCertificates,
  gatewayServiceEntry,
  spawnService,
  startGateway,
  startPostgresCluster,
  startRabbitMqNode,
  urlAsRole,
  waitForStatus,
} from '../../packages/testing/dist/index.js';
import { serviceAllocatorEnv } from './allocator-env.mjs';
import { gatewayCounters } from './counters/gateway.mjs';
import {
  billingDatabaseTemplate,
  TEST_EDGE_ADMISSION_ROLE,
  TEST_WORKER_LEDGER_ROLE,
} from '../../services/billing/dist/db/client.js';
import { dispatcherDatabaseTemplate } from '../../services/dispatcher/dist/db/migrate.js';

export const CHAT_MODEL = 'bench/chat';
export const NATIVE_MODEL = 'bench/native';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/**
 * A service process we own. Once it listens, its output goes to <logDir>/<name>.log instead of
 * the test helper's in-memory capture, which would grow with every request of the run.
 */
async function spawnReady(name, env, { cleanup, logDir }) {
  const child = await spawnService({
    entry: gatewayServiceEntry(name, root),
    // The images' allocator settings (BENCH_MALLOC=default: glibc's own).
    env: { ...serviceAllocatorEnv(), ...env },
    nodeArgs: [
      // BENCH_NODE_ARGS: V8 flags for the four services only (heap sizing trials).
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
      // BENCH_CPU_PROF=1: each service writes a .cpuprofile at exit (open it in Chrome DevTools).
      ...(process.env.BENCH_CPU_PROF === '1'
        ? [
            '--cpu-prof',
            `--cpu-prof-dir=${path.join(logDir, '..', 'profiles')}`,
            `--cpu-prof-name=${name}.cpuprofile`,
          ]
        : []),
    ],
  });
  cleanup.push(() => cleanup.stopChild(child.child));
  const log = createWriteStream(path.join(logDir, `${name}.log`));
  log.write(child.output());
  for (const stream of [child.child.stdout, child.child.stderr]) {
    stream.removeAllListeners('data');
    stream.pipe(log, { end: false });
  }
  await waitForStatus(`${child.baseUrl}/readyz`, 200);
  return child;
}

/**
 * BENCH_SQL_PROFILE=1: PostgreSQL also times each function (self and total) and each statement
 * run inside a function, with its planning: counters/postgres.mjs, `sqlProfile`.
 */
const SQL_PROFILE_SETTINGS = [
  'track_functions=pl',
  'pg_stat_statements.track=all',
  'pg_stat_statements.track_planning=on',
];

export async function startInfrastructure(baseDir, { cleanup, sqlProfile = false }) {
  const [postgres, rabbitmq] = await Promise.all([
    // Statement statistics: the bench counts the statements one request sends.
    startPostgresCluster({
      baseDir: path.join(baseDir, 'pg'),
      statementStatistics: true,
      settings: sqlProfile ? SQL_PROFILE_SETTINGS : [],
    }).then((pg) => {
      cleanup.push(() => pg.stop());
      return pg;
    }),
    startRabbitMqNode({ baseDir: path.join(baseDir, 'rabbitmq') }).then((mq) => {
      cleanup.push(() => mq.destroy());
      return mq;
    }),
  ]);
  const pids = {
    postgres: Number(
      readFileSync(path.join(baseDir, 'pg/data/postmaster.pid'), 'utf8').split('\n')[0],
    ),
    rabbitmq: Number(readFileSync(path.join(baseDir, 'rabbitmq/rabbitmq.pid'), 'utf8').trim()),
  };
  return { postgres, rabbitmq, pids };
}

/**
 * Billing, dispatcher, worker and edge, started by `startGateway` as every test stack starts
 * them. The dispatcher's tick and receiver CA come from the webhook phase's settings.
 */
export async function startServices(
  infra,
  { dispatchIntervalMs, caFile, holdEnds, admissions, jobs },
  run,
) {
  const billingOwnerUrl = await createIsolatedDatabase(
    infra.postgres.adminUrl,
    billingDatabaseTemplate,
  );
  // Migrated by the owner; the dispatcher runs as its runtime role (it no longer migrates).
  const dispatcherOwnerUrl = await createIsolatedDatabase(
    infra.postgres.adminUrl,
    dispatcherDatabaseTemplate,
  );
  const dispatcherUrl = urlAsRole(dispatcherOwnerUrl, dispatcherDatabaseTemplate.runtimeRole);
  const gateway = await startGateway(
    {
      launch: ({ service, env }) => spawnReady(service, env, run),
      // Synchronous jobs straight to the worker (ADR 0072), unless BENCH_JOBS=queue.
      directJobs: jobs !== 'queue',
      amqp: () => ({ AMQP_URL: infra.rabbitmq.url, AMQP_PREFIX: 'bench.' }),
      databaseUrls: {
        billing: urlAsRole(billingOwnerUrl, billingDatabaseTemplate.runtimeRole),
        dispatcher: dispatcherUrl,
        // The worker ends holds in billing's database itself (ADR 0070) unless the run
        // measures the path through billing's API (BENCH_HOLD_ENDS=api).
        ...(holdEnds === 'api'
          ? {}
          : { workerLedger: urlAsRole(billingOwnerUrl, TEST_WORKER_LEDGER_ROLE) }),
        // Edge admits API keys there itself too, unless BENCH_ADMISSIONS=api.
        ...(admissions === 'api'
          ? {}
          : { edgeAdmission: urlAsRole(billingOwnerUrl, TEST_EDGE_ADMISSION_ROLE) }),
      },
    },
    {
      dispatcher: {
        DISPATCH_INTERVAL_MS: String(dispatchIntervalMs),
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        WEBHOOK_CA_FILE: caFile,
      },
      // The webhook phase's receiver is on loopback: edge accepts its URL with this, as the
      // dispatcher does (without it every async job is 400).
      edge: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' },
    },
  );
  const { billing, dispatcher, workers, edges } = gateway;
  const [worker] = workers;
  const [edge] = edges;
  // The gateway's databases, whose PostgreSQL counters the bench reads.
  const databases = [billingOwnerUrl, dispatcherOwnerUrl].map((url) =>
    new URL(url).pathname.slice(1),
  );
  return {
    billing,
    dispatcher,
    worker,
    edge,
    adminToken: gateway.secrets.adminToken,
    billingOwnerUrl,
    databases,
  };
}

export async function startUpstream({ chunks, gapMs }, { cleanup }) {
  const upstream = await spawnService({
    entry: path.join(root, 'infra/bench/upstream.mjs'),
    env: { BENCH_STREAM_CHUNKS: String(chunks), BENCH_STREAM_GAP_MS: String(gapMs) },
  });
  cleanup.push(() => cleanup.stopChild(upstream.child));
  return upstream;
}

async function admin(services, method, route, body, extraHeaders = {}) {
  const response = await fetch(`${services.edge.baseUrl}/admin/v1${route}`, {
    method,
    headers: {
      Authorization: `Bearer ${services.adminToken}`,
      'Content-Type': 'application/json',
      ...extraHeaders,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: HTTP ${response.status} ${text}`);
  return JSON.parse(text);
}

/**
 * Catalog entries on the fake upstream, and `accounts` funded accounts with a raised rate limit
 * (one API key each), through the operator API. Returns their API keys, the first account's
 * first.
 */
export async function provision(
  services,
  upstreamUrl,
  { keyBudget = false, keyLimits = false, keyedTarget = false, accounts = 1 } = {},
) {
  const common = {
    provider: 'node',
    upstream_model: 'bench',
    max_output_tokens: 64,
    nodes: [{ url: upstreamUrl }],
    input_price_dzd_per_m: 1_000,
    output_price_dzd_per_m: 2_000,
  };
  await admin(services, 'PUT', `/models/${CHAT_MODEL}`, { kind: 'chat', ...common });
  await admin(services, 'PUT', `/models/${NATIVE_MODEL}`, {
    kind: 'completion',
    protocol: 'openai',
    ...common,
  });
  const apiKeys = [];
  for (let index = 0; index < accounts; index += 1) {
    apiKeys.push(
      await fundedKey(services, index === 0 ? 'bench' : `bench-${index}`, { keyBudget, keyLimits }),
    );
  }
  // The gateway-keyed target's key: an account of its own, its key with both on.
  const keyedKey = keyedTarget
    ? await fundedKey(services, 'bench-keyed', { keyBudget: true, keyLimits: true })
    : undefined;
  return { apiKeys, keyedKey };
}

/** One funded account with a raised rate limit and its API key `bench`; returns the key. */
async function fundedKey(services, name, { keyBudget, keyLimits }) {
  const account = await admin(services, 'POST', '/accounts', { name });
  const { key } = await admin(services, 'POST', `/accounts/${account.id}/api-keys`, {
    name: 'bench',
  });
  await admin(
    services,
    'POST',
    `/accounts/${account.id}/credits`,
    { amount_dzd: 1_000_000, reference: 'bench' },
    { 'Idempotency-Key': `bench-${account.id}` },
  );
  await admin(services, 'PATCH', `/accounts/${account.id}`, { rate_limit_per_minute: 100_000 });
  if (keyBudget) {
    // BENCH_KEY_BUDGET=1: the key has a daily budget far above what a run spends, so
    // every admission checks and reserves it and every settlement releases it.
    await admin(services, 'PUT', `/accounts/${account.id}/api-keys/bench/budget`, {
      limit_dzd: 500_000,
      period: 'day',
    });
  }
  if (keyLimits) {
    // BENCH_KEY_LIMITS=1: the key has its own requests and tokens per minute far above
    // what a run uses, so every admission counts both windows and every settlement gives back.
    await admin(services, 'PUT', `/accounts/${account.id}/api-keys/bench/rate-limit`, {
      requests_per_minute: 1_000_000,
      tokens_per_minute: 10_000_000_000,
    });
  }
  return key;
}

/**
 * Everything the gateway needs, started in order: a temporary directory, a throwaway CA for the
 * webhook receiver, PostgreSQL, RabbitMQ and the fake upstream, the four services, funded API
 * keys. Each start pushes its stop onto `cleanup`. `gateway` is the HTTP target for the phases.
 */
export async function startBenchStack({
  cleanup,
  logDir,
  upstreamStream,
  dispatchIntervalMs,
  keyBudget = false,
  keyLimits = false,
  keyedTarget = false,
  accounts = 1,
  holdEnds = 'ledger',
  admissions = 'direct',
  jobs = 'direct',
  sqlProfile = false,
  log,
}) {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  chmodSync(baseDir, 0o755); // PostgreSQL's unprivileged owner must traverse it
  cleanup.push(() => rmSync(baseDir, { recursive: true, force: true }));
  const certs = createTestCertificates();
  cleanup.push(() => certs.remove());
  const run = { cleanup, logDir, sqlProfile };
  log('starting PostgreSQL, RabbitMQ and the fake upstream');
  const [infra, upstream] = await Promise.all([
    startInfrastructure(baseDir, run),
    startUpstream(upstreamStream, run),
  ]);
  log(`starting billing, dispatcher, worker and edge (dispatcher tick ${dispatchIntervalMs} ms)`);
  const services = await startServices(
    infra,
    { dispatchIntervalMs, caFile: certs.caFile, holdEnds, admissions, jobs },
    run,
  );
  const { apiKeys, keyedKey } = await provision(services, upstream.baseUrl, {
    keyBudget,
    keyLimits,
    keyedTarget,
    accounts,
  });
  const [apiKey] = apiKeys;
  const gateway = {
    name: 'gateway',
    url: services.edge.baseUrl,
    path: '/v1/chat/completions',
    // Requests take the accounts' keys in turn (BENCH_ACCOUNTS).
    headerSets: apiKeys.map((key) => ({ authorization: `Bearer ${key}` })),
    processes: Object.fromEntries(
      ['edge', 'billing', 'worker', 'dispatcher'].map((name) => [
        name,
        () => [services[name].child.pid],
      ]),
    ),
  };
  const counters = await gatewayCounters({
    infra,
    services,
    databases: services.databases,
    sqlProfile,
  });
  cleanup.push(() => counters.close());
  // The same processes through the keyed key. Its slices share the gateway's counters, which
  // are read around both targets' slices and divided by both targets' requests.
  const gatewayKeyed = keyedKey && {
    ...gateway,
    name: 'gateway-keyed',
    headerSets: [{ authorization: `Bearer ${keyedKey}` }],
    countedWith: 'gateway',
  };
  return {
    baseDir,
    infra,
    upstream,
    services,
    certs,
    apiKey,
    gateway: { ...gateway, counters },
    gatewayKeyed,
  };
}
