import { createGatewayBus, gatewayNames, type MessageBus } from '@gateway/messaging';
import {
  brokerReadiness,
  createPostgresPool,
  createServiceApp,
  finishApp,
  serveHttp,
  type ServiceShell,
} from '@gateway/runtime';
import { createBillingClient, type BillingClient } from './billing/billing-client.js';
import { createLedgerHoldEnds } from './billing/ledger-hold-ends.js';
import type { WorkerConfig } from './config.js';
import { startJobConsumers } from './jobs/job-consumer.js';
import { Cancellations, type JobRunnerDeps } from './jobs/run-job.js';
import { withDirectJobs } from './jobs/direct-jobs.js';
import { createWorkerMetrics } from './jobs/metrics.js';
import { createNodeRegistry, startHealthReporter } from './upstream/node-pool.js';
import { closeUpstreamAgent, createUpstreamAgent } from './upstream/upstream-agent.js';
import { hostname } from 'node:os';
import { billingBatchSizes, settledMicroDzdCounter } from '@gateway/observability';
import type pg from 'pg';

const PUBLISH_WAIT_MS = 60_000;
/** At shutdown, how long upstream calls still open may take to end before they are cut. */
const UPSTREAM_CLOSE_GRACE_MS = 1_000;
/** Node health reports to billing: on change at most once a second, else every 30 s. */
const HEALTH_REPORT_TICK_MS = 1_000;
const HEALTH_REPORT_REFRESH_MS = 30_000;

export interface WorkerDependencies {
  /** A bus to share (local mode runs every service on one in-process bus); else RabbitMQ. */
  bus?: MessageBus;
}

/**
 * Wires and starts the worker: clients → HTTP (ops endpoints) → consumers, with shutdown steps
 * in that order on the shell's lifecycle. Returns the port the ops endpoints listen on.
 */
export async function startWorkerService(
  config: WorkerConfig,
  shell: ServiceShell,
  dependencies: WorkerDependencies = {},
): Promise<{ port: number }> {
  const ownsBus = dependencies.bus === undefined;
  // A reply or settlement waits out a broker restart (a minute) rather than fail: the answer
  // exists, and failing would make its job run again.
  const bus =
    dependencies.bus ??
    createGatewayBus(config, shell.logger, {
      service: 'inference-worker',
      publishConfirmTimeoutMs: PUBLISH_WAIT_MS,
    });
  // Closed after the consumers and the HTTP server (its shutdown step is registered below).
  const upstreamAgent = createUpstreamAgent({
    jobsInFlightMax: config.DIRECT_JOBS_MAX + config.JOB_PREFETCH + config.PRIORITY_JOB_PREFETCH,
  });
  const registry = createNodeRegistry({ dispatcher: upstreamAgent });
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
  const names = gatewayNames(config.AMQP_PREFIX);
  // Closed after the HTTP server and the consumers (its shutdown step is registered below).
  const billing = workerBillingClient(config, shell);
  const metrics = createWorkerMetrics(shell.metrics.registry);
  // Set once the consumers run; the direct jobs are refused (queued by edge) until then.
  let consuming = false;
  const deps = jobRunnerDeps(config, billing, { registry, upstreamAgent, external });
  const listener =
    config.EDGE_INTERNAL_TOKEN === undefined
      ? app
      : withDirectJobs(app, {
          edgeToken: config.EDGE_INTERNAL_TOKEN,
          maxInFlight: config.DIRECT_JOBS_MAX,
          accepting: () => consuming && !shell.lifecycle.isShuttingDown,
          bus,
          names,
          deps,
          logger: shell.logger,
          metrics,
        });
  const server = await serveHttp(shell, listener, config, {
    maxRequestsPerConnection: config.DIRECT_JOBS_PER_CONNECTION,
    expressApp: app,
  });
  const consumers: { cancel(): Promise<void> }[] = [];
  shell.lifecycle.onShutdown('consumers', async () => {
    await Promise.all(consumers.map((consumer) => consumer.cancel()));
  });
  if (ownsBus) shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
  shell.lifecycle.onShutdown('health-checks', async () => registry.stop());
  shell.lifecycle.onShutdown('upstream-connections', () =>
    closeUpstreamAgent(upstreamAgent, UPSTREAM_CLOSE_GRACE_MS),
  );

  shell.lifecycle.onShutdown('billing-client', () => billing.close());

  if (ownsBus) await bus.start();
  registry.startHealthChecks(config.NODE_HEALTH_INTERVAL_MS);
  const reporter = startHealthReporter({
    registry,
    report: (report) => billing.reportNodeHealth(report),
    workerId: `${hostname()}:${process.pid}`,
    intervalMs: HEALTH_REPORT_TICK_MS,
    refreshMs: HEALTH_REPORT_REFRESH_MS,
    onError: (error) => shell.logger.warn({ err: error }, 'node health report failed'),
  });
  shell.lifecycle.onShutdown('health-reporter', async () => reporter.stop());
  consumers.push(
    ...(await startJobConsumers({
      bus,
      names,
      prefix: config.AMQP_PREFIX,
      prefetch: { default: config.JOB_PREFETCH, priority: config.PRIORITY_JOB_PREFETCH },
      deps,
      logger: shell.logger,
      metrics,
    })),
  );
  consuming = true;
  shell.logger.info(
    { external: external !== undefined, holdsEnded: config.LEDGER_DATABASE_URL ? 'ledger' : 'api' },
    'consuming jobs',
  );
  return { port: server.port };
}

/** What running a job needs, whichever way the job came (queue or direct). */
function jobRunnerDeps(
  config: WorkerConfig,
  billing: BillingClient,
  upstream: Pick<JobRunnerDeps, 'registry' | 'upstreamAgent' | 'external'>,
): JobRunnerDeps {
  return {
    billing,
    ...upstream,
    cancellations: new Cancellations(config.CANCEL_MEMORY_MS),
    timeouts: {
      firstByteMs: config.NODE_FIRST_BYTE_TIMEOUT_MS,
      idleMs: config.NODE_IDLE_TIMEOUT_MS,
      requestMs: config.NODE_REQUEST_TIMEOUT_MS,
      generationMs: config.JOB_MAX_GENERATION_MS,
    },
    responseMaxBytes: config.NODE_RESPONSE_MAX_BYTES,
    maxAttempts: config.NODE_MAX_ATTEMPTS,
  };
}

/** Billing's API, and the ledger role's statements when `LEDGER_DATABASE_URL` is set. */
function workerBillingClient(config: WorkerConfig, shell: ServiceShell): BillingClient {
  const onBatch = billingBatchSizes(shell.metrics.registry, shell.name);
  return createBillingClient(
    {
      baseUrl: config.BILLING_URL,
      token: config.BILLING_INTERNAL_TOKEN,
      timeoutMs: config.BILLING_TIMEOUT_MS,
      catalogCacheTtlMs: config.CATALOG_CACHE_TTL_MS,
      attempts: config.BILLING_ATTEMPTS,
      minRetryDelayMs: 200,
      batchMaxInFlight: config.BILLING_BATCH_MAX_IN_FLIGHT,
      onBatch,
    },
    config.LEDGER_DATABASE_URL === undefined
      ? undefined
      : createLedgerHoldEnds({
          pool: ledgerPool(config.LEDGER_DATABASE_URL, config, shell),
          batchMaxInFlight: config.BILLING_BATCH_MAX_IN_FLIGHT,
          settledMicroDzd: settledMicroDzdCounter(shell.metrics.registry),
          onBatch: (size) => onBatch('settlements', size),
        }),
  );
}

/**
 * The ledger role's pool: a statement not answered within BILLING_TIMEOUT_MS fails in the
 * client too, so that a cut network ends in the settlement queue, not in a wait.
 */
function ledgerPool(url: string, config: WorkerConfig, shell: ServiceShell): pg.Pool {
  const pool = createPostgresPool(url, config.LEDGER_DATABASE_POOL_MAX, {
    timeoutMs: config.BILLING_TIMEOUT_MS,
    clientTimeout: true,
  });
  // An idle connection's error (the server restarted) must not end the process.
  pool.on('error', (error) => shell.logger.warn({ err: error }, 'ledger connection failed'));
  return pool;
}
