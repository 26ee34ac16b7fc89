import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  createTestRole,
  spawnService,
  testServiceAmqpUrl,
  uniquePrefix,
  urlAsRole,
  waitFor,
  waitForStatus,
  type ServiceProcess,
} from '@gateway/testing';
import { loadCompose, type ComposeService } from './support/compose.js';
import { parseExposition, queryableNames, type Exposition } from './support/prometheus-text.js';
import { alertExpressions, dashboardExpressions, metricNamesIn } from './support/promql.js';
import { GATEWAY_SERVICES, type GatewayService } from './support/schemas.js';

/*
 * What `docker compose up` runs, without Docker: the built services and stand-ins started as
 * real processes with the environment and commands docker-compose.yml gives them (addresses
 * moved to loopback: compose host names become the test PostgreSQL, RabbitMQ and the spawned
 * processes), the migration one-shot, then the seed and the README's request. Then every metric
 * the Grafana dashboard and the alert rules use must appear in the services' /metrics.
 */

const run = promisify(execFile);
const compose = loadCompose();
const composeService = (name: string): ComposeService => compose.services[name]!;
const entry = (service: string) => path.resolve('services', service, 'dist', 'main.js');
const STAND_IN_CLI = path.resolve('packages/stand-ins/dist/cli.js');
const COMPOSE_HOSTS = ['postgres', 'rabbitmq', ...GATEWAY_SERVICES];

/**
 * Series that come from RabbitMQ's own exporter (the rabbitmq_prometheus plugin, enabled in
 * compose by infra/compose/rabbitmq/enabled_plugins and expected on the platform's RabbitMQ in
 * Kubernetes; Prometheus scrapes its /metrics/per-object endpoint), not from the services; and
 * `up`, which Prometheus records for every target it scrapes.
 */
const EXTERNAL_METRICS = new Set(['rabbitmq_queue_messages_ready', 'up']);

/**
 * Labels Prometheus gives every series of a target, not the services: `job` and `namespace`
 * (compose's scrape configuration, the PodMonitor on Kubernetes).
 */
const TARGET_LABELS = new Set(['job', 'namespace']);

/** A compose service's environment with its addresses moved to loopback. */
function onLoopback(name: string, replacements: Record<string, string>): Record<string, string> {
  const env = { ...composeService(name).environment };
  // spawnService binds 127.0.0.1 on a free port; compose's HOST=0.0.0.0 must not reach a test.
  delete env.HOST;
  delete env.PORT;
  Object.assign(env, replacements);
  for (const [key, value] of Object.entries(env)) {
    const host = COMPOSE_HOSTS.find((h) => new RegExp(`//([^/@]*@)?${h}[:/]`).test(value));
    if (host) throw new Error(`${name}: ${key} still points at compose host ${host}`);
  }
  return env;
}

/** A stand-in's compose command, on a free port. */
function standInArgs(name: string): string[] {
  const args = [...composeService(name).command!];
  args[args.indexOf('--port') + 1] = '0';
  return args;
}

const running: ServiceProcess[] = [];
const databases: { drop(): Promise<void> }[] = [];
const processes: Partial<Record<GatewayService, ServiceProcess>> = {};
let nodeUrl: string;
let seedEnv: Record<string, string>;

/** The seed's script on the host: compose mounts it, or its directory, where its command runs. */
function seedScript(): string {
  const script = composeService('seed').command![1]!;
  for (const volume of composeService('seed').volumes!) {
    const [host, target] = volume.split(':') as [string, string];
    if (target === script) return path.resolve(host);
    if (script.startsWith(`${target}/`)) return path.resolve(host, script.slice(target.length + 1));
  }
  throw new Error(`no volume provides ${script}`);
}

async function seed(): Promise<string> {
  const { stdout } = await run(process.execPath, [seedScript()], {
    env: { PATH: process.env.PATH, ...seedEnv },
    timeout: 60_000,
  });
  const key = /^export GATEWAY_API_KEY=(\S+)$/m.exec(stdout)?.[1];
  if (!key) throw new Error(`seed printed no key: ${stdout}`);
  return key;
}

async function chat(apiKey: string, model: string) {
  const response = await fetch(`${processes.edge!.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }] }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const start = async (options: Parameters<typeof spawnService>[0]) => {
    const started = await spawnService(options);
    running.push(started);
    return started;
  };
  const billingDb = await createTestDatabase();
  const dispatcherDb = await createTestDatabase();
  databases.push(billingDb, dispatcherDb);
  // Each service as its own broker user (compose's `rabbitmq-users` creates them with these
  // permissions; test/deploy/broker-users.integration.test.ts runs it).
  const prefix = uniquePrefix('compose');
  const amqp = (service: GatewayService) => ({
    AMQP_URL: testServiceAmqpUrl(service),
    AMQP_PREFIX: prefix,
  });

  const provider = await start({
    entry: STAND_IN_CLI,
    args: standInArgs('stand-in-provider'),
    env: {},
  });
  const node = await start({ entry: STAND_IN_CLI, args: standInArgs('stand-in-node'), env: {} });
  nodeUrl = node.baseUrl;

  // The migration one-shots, with their compose entrypoints, before billing and the dispatcher
  // start: as the owner, granting the runtime role (created as compose's init script does) that
  // the service runs as. Returns the service's URL as that role.
  const migrateFor = async (service: GatewayService, oneShot: string, databaseUrl: string) => {
    const migrate = composeService(oneShot);
    const runtimeRole = migrate.environment.RUNTIME_DATABASE_ROLE!;
    await createTestRole(runtimeRole);
    for (const role of ['WORKER_DATABASE_ROLE', 'EDGE_DATABASE_ROLE']) {
      const name = migrate.environment[role];
      if (name) await createTestRole(name);
    }
    await run(process.execPath, [path.resolve('services', service, migrate.entrypoint![1]!)], {
      env: { PATH: process.env.PATH, ...onLoopback(oneShot, { DATABASE_URL: databaseUrl }) },
      timeout: 60_000,
    });
    return urlAsRole(databaseUrl, runtimeRole);
  };
  const billingRuntimeUrl = await migrateFor('billing', 'migrate', billingDb.url);
  const dispatcherRuntimeUrl = await migrateFor(
    'dispatcher',
    'dispatcher-migrate',
    dispatcherDb.url,
  );

  const up = async (service: GatewayService, replacements: Record<string, string>) => {
    processes[service] = await start({
      entry: entry(service),
      env: onLoopback(service, replacements),
    });
    await waitForStatus(`${processes[service]!.baseUrl}/readyz`, 200, 30_000);
    return processes[service]!.baseUrl;
  };
  const billingUrl = await up('billing', { DATABASE_URL: billingRuntimeUrl, ...amqp('billing') });
  const dispatcherUrl = await up('dispatcher', {
    DATABASE_URL: dispatcherRuntimeUrl,
    ...amqp('dispatcher'),
  });
  // The worker's ledger role on billing's database, as compose's migrate one-shot granted it.
  const workerRole = composeService('migrate').environment.WORKER_DATABASE_ROLE!;
  const workerUrl = await up('inference-worker', {
    ...amqp('inference-worker'),
    BILLING_URL: billingUrl,
    LEDGER_DATABASE_URL: urlAsRole(billingDb.url, workerRole),
    EXTERNAL_PROVIDER_URL: provider.baseUrl,
  });
  // Edge's admission role there likewise.
  const edgeRole = composeService('migrate').environment.EDGE_DATABASE_ROLE!;
  const edgeUrl = await up('edge', {
    ...amqp('edge'),
    BILLING_URL: billingUrl,
    DISPATCHER_URL: dispatcherUrl,
    ADMISSION_DATABASE_URL: urlAsRole(billingDb.url, edgeRole),
    // Synchronous jobs straight to the worker, with compose's shared credential (ADR 0072).
    WORKER_URLS: workerUrl,
  });
  seedEnv = onLoopback('seed', { GATEWAY_URL: edgeUrl, DEMO_NODE_URL: nodeUrl });
}, 180_000);

afterAll(async () => {
  for (const process of running.reverse()) await process.stop('SIGTERM');
  await Promise.all(databases.map((db) => db.drop()));
});

describe('the compose stack, on loopback', () => {
  let apiKey: string;

  it('seeds the demo account, key and models through the operator API', async () => {
    apiKey = await seed();
    expect(apiKey.length).toBeGreaterThan(20);
  });

  it("answers the README's chat completion with the seeded key, on the stand-in node", async () => {
    const { status, body } = await chat(apiKey, 'demo/chat-small');
    expect({ status, object: body.object }).toEqual({ status: 200, object: 'chat.completion' });
    const [choice] = body.choices as { message: { content: string } }[];
    expect(choice!.message.content.length).toBeGreaterThan(0);
    // Compose's edge and worker share the direct jobs' credential: the worker took it directly.
    const done = await waitFor(
      () => processes['inference-worker']!.logs.find((line) => line.msg === 'job done'),
      5_000,
      "the worker's job line",
    );
    expect(done.direct).toBe(true);
  });

  it('answers the reasoning model through the stand-in provider', async () => {
    const { status, body } = await chat(apiKey, 'ext/reasoner-mini');
    expect({ status, object: body.object }).toEqual({ status: 200, object: 'chat.completion' });
  });

  it('seeds again safely: same account, a fresh key, the old one revoked', async () => {
    const again = await seed();
    expect(again).not.toBe(apiKey);
    expect((await chat(again, 'demo/chat-small')).status).toBe(200);
    expect((await chat(apiKey, 'demo/chat-small')).status).toBe(401);
    apiKey = again;
  });
});

describe('dashboard and alert metrics', () => {
  const scrapes: Partial<Record<GatewayService, Exposition>> = {};

  beforeAll(async () => {
    for (const service of GATEWAY_SERVICES) {
      const response = await fetch(`${processes[service]!.baseUrl}/metrics`);
      expect(response.status).toBe(200);
      scrapes[service] = parseExposition(await response.text());
    }
  });

  const expressions = [...dashboardExpressions(), ...alertExpressions()];

  it('reads only metrics the services expose (or the few RabbitMQ exports itself)', () => {
    const exposed = new Set(
      GATEWAY_SERVICES.flatMap((service) => [...queryableNames(scrapes[service]!)]),
    );
    const unknown = expressions.flatMap(({ where, expr }) =>
      metricNamesIn(expr)
        .filter((name) => !exposed.has(name) && !EXTERNAL_METRICS.has(name))
        .map((name) => `${where}: ${name}`),
    );
    expect(unknown).toEqual([]);
    // The allowlist stays minimal: every entry is used, and none is something a service exposes.
    const used = new Set(expressions.flatMap(({ expr }) => metricNamesIn(expr)));
    for (const name of EXTERNAL_METRICS) {
      expect([name, used.has(name), exposed.has(name)]).toEqual([name, true, false]);
    }
  });

  it('filters on labels the metrics carry', () => {
    const samples = GATEWAY_SERVICES.flatMap((service) => scrapes[service]!.samples);
    const problems: string[] = [];
    for (const { where, expr } of expressions) {
      for (const selector of expr.matchAll(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)) {
        const [, name, matchers] = selector;
        const seen = samples.filter((s) => s.name === name);
        if (seen.length === 0) continue; // no series yet (e.g. no webhook attempted): names only
        for (const [, label] of matchers!.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)) {
          if (TARGET_LABELS.has(label!)) continue;
          if (!seen.some((s) => label! in s.labels)) problems.push(`${where}: ${name}{${label}}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("counts the demo's traffic: requests, jobs, settled money", () => {
    const edge = scrapes.edge!.samples;
    expect(
      edge.some(
        (s) =>
          s.name === 'edge_http_request_duration_seconds_count' &&
          s.labels.route === '/v1/chat/completions' &&
          s.labels.status === '200',
      ),
    ).toBe(true);
    // The worker settles in the ledger itself (ADR 0070) and counts what it charged under
    // billing's name, which the dashboard sums over every target.
    const settled = (service: GatewayService) =>
      scrapes[service]!.samples.find((s) => s.name === 'billing_settled_micro_dzd_total')?.value;
    expect(settled('inference-worker')).toBeGreaterThan(0);
    expect(settled('billing')).toBe(0);
    const jobs = scrapes['inference-worker']!.samples.filter(
      (s) => s.name === 'inference_worker_jobs_total' && s.labels.result === 'succeeded',
    );
    expect(jobs.reduce((sum, s) => sum + s.value, 0)).toBeGreaterThanOrEqual(3);
  });
});
