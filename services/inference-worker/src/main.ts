import { loadConfigOrExit } from '@gateway/config';
import { createGatewayBus, gatewayNames } from '@gateway/messaging';
import {
  brokerReadiness,
  createServiceApp,
  createServiceShell,
  finishApp,
  serveHttp,
} from '@gateway/runtime';
import { createBillingClient } from './billing/billing-client.js';
import { workerConfigSchema } from './config.js';
import { Cancellations } from './jobs/cancellations.js';
import { startJobConsumers } from './jobs/job-consumer.js';
import { createWorkerMetrics } from './jobs/metrics.js';
import { createNodeRegistry } from './upstream/node-pool.js';

// Composition root: config → logger/metrics → clients → HTTP → consumers → ordered shutdown.
const config = loadConfigOrExit('inference-worker', workerConfigSchema);
const shell = createServiceShell('inference-worker', config);
const bus = createGatewayBus(config, shell.logger);
const registry = createNodeRegistry();
const billing = createBillingClient({
  baseUrl: config.BILLING_URL,
  internalToken: config.BILLING_INTERNAL_TOKEN,
  timeoutMs: config.BILLING_TIMEOUT_MS,
  catalogCacheTtlMs: config.CATALOG_CACHE_TTL_MS,
  attempts: config.BILLING_ATTEMPTS,
});
const external =
  config.EXTERNAL_PROVIDER_URL && config.EXTERNAL_PROVIDER_API_KEY
    ? { url: config.EXTERNAL_PROVIDER_URL, apiKey: config.EXTERNAL_PROVIDER_API_KEY }
    : undefined;

const app = createServiceApp({
  logger: shell.logger,
  metrics: shell.metrics,
  readiness: [brokerReadiness(bus)],
  isShuttingDown: () => shell.lifecycle.isShuttingDown,
});
finishApp(app, shell.logger);

await serveHttp(shell, app, config);
shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
shell.lifecycle.onShutdown('health-checks', async () => registry.stop());
await bus.start();
registry.startHealthChecks(config.NODE_HEALTH_INTERVAL_MS);
await startJobConsumers({
  bus,
  names: gatewayNames(config.AMQP_PREFIX),
  prefix: config.AMQP_PREFIX,
  prefetch: { default: config.JOB_PREFETCH, priority: config.PRIORITY_JOB_PREFETCH },
  deps: {
    billing,
    registry,
    cancellations: new Cancellations(config.CANCEL_MEMORY_MS),
    timeouts: {
      firstByteMs: config.NODE_FIRST_BYTE_TIMEOUT_MS,
      idleMs: config.NODE_IDLE_TIMEOUT_MS,
      requestMs: config.NODE_REQUEST_TIMEOUT_MS,
    },
    maxAttempts: config.NODE_MAX_ATTEMPTS,
    external,
  },
  logger: shell.logger,
  metrics: createWorkerMetrics(shell.metrics.registry),
});
shell.logger.info({ external: external !== undefined }, 'consuming jobs');
