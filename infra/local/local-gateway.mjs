// The whole gateway in one process, for a newcomer's machine: PostgreSQL from the machine's own
// binaries (state in the data directory) unless DATABASE_URL is set, the in-process message bus
// unless AMQP_URL is set, the four services, and the stand-in model node and external provider.
// Seeds a demo account, key and catalog (idempotently), prints how to call it, and stops every
// part on Ctrl-C. Expects `pnpm install` and `pnpm build` done (infra/local/start.sh does both).
import path from 'node:path';
import { loadConfig } from '../../packages/config/dist/index.js';
import { createInProcessBus, gatewayTopology } from '../../packages/messaging/dist/index.js';
import { createServiceShell } from '../../packages/runtime/dist/index.js';
import {
  createStandInModelNode,
  createStandInProvider,
} from '../../packages/stand-ins/dist/index.js';
import { billingConfigSchema } from '../../services/billing/dist/config.js';
import { startBillingService } from '../../services/billing/dist/service.js';
import { dispatcherConfigSchema } from '../../services/dispatcher/dist/config.js';
import { startDispatcherService } from '../../services/dispatcher/dist/service.js';
import { edgeConfigSchema } from '../../services/edge/dist/config.js';
import { startEdgeService } from '../../services/edge/dist/service.js';
import { workerConfigSchema } from '../../services/inference-worker/dist/config.js';
import { startWorkerService } from '../../services/inference-worker/dist/service.js';
import { localDatabases, localSecrets, migrateDatabases } from './local-data.mjs';
import { printWelcome, seedDemo, seedDemoUsage } from './local-seed.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const dataDir = path.resolve(process.env.GATEWAY_DATA_DIR ?? path.join(root, '.data'));
const basePort = Number(process.env.GATEWAY_PORT_BASE ?? 8080);
const ports = {
  edge: basePort,
  billing: basePort + 1,
  worker: basePort + 2,
  dispatcher: basePort + 3,
  node: basePort + 10,
  provider: basePort + 11,
  postgres: Number(process.env.GATEWAY_POSTGRES_PORT ?? 55432),
};
const LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn';
const PROVIDER_MODEL = 'reasoner-2026-01';

const log = (message) => console.log(`[gateway] ${message}`);
/** Stop steps, run last-registered first (edge before the services it calls). */
const stoppers = [];

/** A service with an embedded shell: the host owns signals and shuts services down in order. */
async function startService(name, schema, env, start, deps) {
  const config = loadConfig(name, schema, { LOG_LEVEL, SHUTDOWN_TIMEOUT_MS: '8000', ...env });
  const shell = createServiceShell(name, config, { embedded: true });
  stoppers.push(() => shell.lifecycle.shutdown('local gateway stopping'));
  return start(config, shell, deps);
}

/** Optional integer setting of the stand-in node, e.g. 0 latency to benchmark the gateway alone. */
function nodeSetting(name) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,6}$/.test(raw)) throw new Error(`${name} must be a non-negative integer`);
  return Number(raw);
}

async function startStandIns() {
  const firstTokenLatencyMs = nodeSetting('STAND_IN_FIRST_TOKEN_MS');
  const tokensPerSecond = nodeSetting('STAND_IN_TOKENS_PER_SECOND');
  const node = await createStandInModelNode({
    port: ports.node,
    ...(firstTokenLatencyMs === undefined ? {} : { firstTokenLatencyMs }),
    ...(tokensPerSecond === undefined ? {} : { tokensPerSecond }),
  });
  stoppers.push(() => node.close());
  const provider = await createStandInProvider({
    port: ports.provider,
    apiKey: 'stand-in-provider-key',
    models: [{ id: PROVIDER_MODEL }],
  });
  stoppers.push(() => provider.close());
  return { nodeUrl: node.url, providerUrl: provider.url, providerKey: 'stand-in-provider-key' };
}

/** One in-process bus shared by every service, or each service's own RabbitMQ connection. */
async function sharedBus() {
  if (process.env.AMQP_URL) return { amqpUrl: process.env.AMQP_URL, bus: undefined };
  const bus = createInProcessBus({ topology: gatewayTopology('') });
  await bus.start();
  stoppers.push(() => bus.close());
  return { amqpUrl: 'amqp://in-process.invalid', bus };
}

async function main() {
  const startedMs = Date.now();
  const secrets = localSecrets(dataDir);
  const databases = await localDatabases(dataDir, ports.postgres, stoppers, log);
  const { billingRuntimeUrl, dispatcherRuntimeUrl, workerLedgerUrl, edgeAdmissionUrl } =
    await migrateDatabases(databases, secrets);
  const standIns = await startStandIns();
  const { amqpUrl, bus } = await sharedBus();
  const deps = bus ? { bus } : {};
  const internal = { AMQP_URL: amqpUrl, HOST: '127.0.0.1' };
  const billingUrl = `http://127.0.0.1:${ports.billing}`;
  await startService(
    'billing',
    billingConfigSchema,
    {
      ...internal,
      PORT: String(ports.billing),
      DATABASE_URL: billingRuntimeUrl,
      EDGE_INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
      WORKER_INTERNAL_TOKEN: secrets.WORKER_INTERNAL_TOKEN,
      MASTER_KEY: secrets.MASTER_KEY,
      USAGE_RETENTION_DAYS: process.env.USAGE_RETENTION_DAYS ?? '400',
    },
    startBillingService,
    deps,
  );
  await startService(
    'dispatcher',
    dispatcherConfigSchema,
    {
      ...internal,
      PORT: String(ports.dispatcher),
      DATABASE_URL: dispatcherRuntimeUrl,
      INTERNAL_TOKEN: secrets.DISPATCHER_INTERNAL_TOKEN,
      ENCRYPTION_KEY: secrets.WEBHOOK_ENCRYPTION_KEY,
      // Local mode delivers to receivers on this machine (development setting, off in production).
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      DISPATCH_INTERVAL_MS: '5000',
    },
    startDispatcherService,
    deps,
  );
  await startService(
    'inference-worker',
    workerConfigSchema,
    {
      ...internal,
      PORT: String(ports.worker),
      BILLING_URL: billingUrl,
      BILLING_INTERNAL_TOKEN: secrets.WORKER_INTERNAL_TOKEN,
      LEDGER_DATABASE_URL: workerLedgerUrl,
      EDGE_INTERNAL_TOKEN: secrets.EDGE_AT_WORKER_TOKEN,
      EXTERNAL_PROVIDER_URL: standIns.providerUrl,
      EXTERNAL_PROVIDER_API_KEY: standIns.providerKey,
    },
    startWorkerService,
    deps,
  );
  await startService(
    'edge',
    edgeConfigSchema,
    {
      ...internal,
      PORT: String(ports.edge),
      BILLING_URL: billingUrl,
      BILLING_INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
      ADMIN_TOKEN: secrets.ADMIN_TOKEN,
      DISPATCHER_URL: `http://127.0.0.1:${ports.dispatcher}`,
      DISPATCHER_INTERNAL_TOKEN: secrets.DISPATCHER_INTERNAL_TOKEN,
      ADMISSION_DATABASE_URL: edgeAdmissionUrl,
      // Synchronous jobs straight to the worker (ADR 0072); the queue takes what it refuses.
      WORKER_URLS: `http://127.0.0.1:${ports.worker}`,
      WORKER_INTERNAL_TOKEN: secrets.EDGE_AT_WORKER_TOKEN,
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      // The dashboard at http://127.0.0.1:<port>/dashboard/: its cookie cannot be Secure there.
      PUBLIC_BASE_URL: `http://127.0.0.1:${ports.edge}`,
      DASHBOARD_INSECURE_LOOPBACK_COOKIE: 'true',
    },
    startEdgeService,
    deps,
  );
  const demo = await seedDemo({
    billingUrl,
    secrets,
    dataDir,
    standIns,
    providerModel: PROVIDER_MODEL,
  });
  await seedDemoUsage({ baseUrl: `http://127.0.0.1:${ports.edge}`, demo });
  printWelcome({
    baseUrl: `http://127.0.0.1:${ports.edge}`,
    demo,
    adminToken: secrets.ADMIN_TOKEN,
    dataDir,
    startedMs,
  });
}

let stopping = false;
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  log('stopping');
  for (const stop of stoppers.reverse()) {
    await stop().catch((error) => log(`stop step failed: ${error.message}`));
  }
  log('stopped');
  process.exit(code);
}
process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));

try {
  await main();
} catch (error) {
  log(`failed to start: ${error.stack ?? error.message}`);
  await stopAll(1);
}
