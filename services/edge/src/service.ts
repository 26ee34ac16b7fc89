import { holdIdOfJob, warmEnvelopeValidators, warmRequestValidators } from '@gateway/contracts';
import { createGatewayBus, gatewayNames, type MessageBus } from '@gateway/messaging';
import {
  brokerReadiness,
  createPostgresPool,
  httpReadiness,
  serveHttp,
  type ServiceShell,
} from '@gateway/runtime';
import type pg from 'pg';
import { createDirectAdmissions } from './billing/direct-admissions.js';
import { buildEdgeApp, trustedProxies } from './app.js';
import { createBillingClient, type BillingClient } from '@gateway/billing-client';
import { billingBatchSizes } from '@gateway/observability';
import { preloadTokenizer } from '@gateway/tokenizer';
import { createDispatcherClient } from './clients/dispatcher-client.js';
import { resolveDashboardDir } from './dashboard/dashboard-site.js';
import type { EdgeConfig } from './config.js';
import { AuthFailureLimiter, identifier } from './http/auth.js';
import { BackgroundResponses } from './responses/background-response.js';
import { Idempotency } from './http/idempotency.js';
import { DeliveredAnswers } from './jobs/delivered-answers.js';
import { HoldReleases } from './jobs/hold-release.js';
import { DirectJobs } from './jobs/direct-jobs.js';
import { InferenceJobs, JobPublisher } from './jobs/inference-jobs.js';
import { ReplyRouter } from './jobs/job-replies.js';
import { edgeSurfaces, missingSurfaceSettings } from './surfaces.js';

const EDGE_CATALOG_CACHE_TTL_MS = 5_000;
// An Idempotency-Key claim outlives the longest request by this much.
const IDEMPOTENCY_LEASE_MARGIN_MS = 30_000;

export interface EdgeDependencies {
  /** A bus to share (local mode runs every service on one in-process bus); else RabbitMQ. */
  bus?: MessageBus;
}

/**
 * Wires and starts edge: clients → jobs → HTTP → bus and reply queue, with shutdown steps in that
 * order on the shell's lifecycle (HTTP drains first, then the reply consumer, then the bus).
 * A process without the public API (`EDGE_SURFACES`) has no bus. Returns the bound port.
 */
export async function startEdgeService(
  config: EdgeConfig,
  shell: ServiceShell,
  dependencies: EdgeDependencies = {},
): Promise<{ port: number }> {
  const surfaces = edgeSurfaces(config.EDGE_SURFACES);
  // main.ts checks this with the configuration; a host embedding edge (local mode) may not.
  const missing = missingSurfaceSettings(surfaces, config);
  if (missing.length > 0) {
    throw new Error(`edge: EDGE_SURFACES ${config.EDGE_SURFACES} needs ${missing.join(' and ')}`);
  }
  // Edge counts and checks every prompt and reads every answer: load the tokenizer's tables and
  // compile the request and reply validators now, not on the first request.
  if (surfaces.has('api')) {
    preloadTokenizer();
    warmRequestValidators();
    warmEnvelopeValidators('inference.reply');
  }
  // API keys admitted in billing's database (ADR 0070), when edge has its role there.
  const directAdmissions =
    surfaces.has('api') && config.ADMISSION_DATABASE_URL !== undefined
      ? createDirectAdmissions({
          pool: admissionPool(config.ADMISSION_DATABASE_URL, config, shell),
          holdTtlMs: config.HOLD_TTL_MS,
          logger: shell.logger,
        })
      : undefined;
  const billing = createBillingClient({
    baseUrl: config.BILLING_URL,
    token: config.BILLING_INTERNAL_TOKEN,
    timeoutMs: config.BILLING_TIMEOUT_MS,
    // The model listing only (admission reads the catalog in billing): other replicas see a
    // change within this, the one that proxied it at once.
    catalogCacheTtlMs: EDGE_CATALOG_CACHE_TTL_MS,
    batchMaxInFlight: config.BILLING_BATCH_MAX_IN_FLIGHT,
    onBatch: billingBatchSizes(shell.metrics.registry, shell.name),
    ...(directAdmissions ? { directAdmissions } : {}),
  });
  if (directAdmissions) {
    shell.lifecycle.onShutdown('admission database', () => directAdmissions.close());
  }
  // The dashboard's bulkhead: its own connections to billing, so that no dashboard load (a
  // sign-in flood included) waits for or holds a connection the public API needs.
  const dashboardBilling = createBillingClient({
    baseUrl: config.BILLING_URL,
    token: config.BILLING_INTERNAL_TOKEN,
    timeoutMs: config.BILLING_TIMEOUT_MS,
    connections: config.DASHBOARD_BILLING_CONNECTIONS,
  });
  const jobPath = surfaces.has('api') ? buildJobPath(config, shell, billing, dependencies) : null;
  const background = new BackgroundResponses(billing, config.BACKGROUND_RESPONSES_MAX);
  const authFailures = new AuthFailureLimiter({
    failuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
  });
  const dispatcher = createDispatcherClient({
    baseUrl: config.DISPATCHER_URL,
    token: config.DISPATCHER_INTERNAL_TOKEN,
    timeoutMs: config.BILLING_TIMEOUT_MS,
  });
  const dashboardDir = surfaces.has('dashboard') ? resolveDashboardDir(config.DASHBOARD_DIR) : null;
  if (surfaces.has('dashboard') && dashboardDir === null) {
    shell.logger.warn('dashboard not built: /dashboard/ is not served');
  }
  const app = buildEdgeApp({
    logger: shell.logger,
    dashboardDir,
    metrics: shell.metrics,
    readiness: [
      ...(jobPath ? [brokerReadiness(jobPath.bus), jobPath.replies.readiness] : []),
      httpReadiness('billing', config.BILLING_URL),
    ],
    surfaces,
    trustedProxies: trustedProxies(config.TRUSTED_PROXIES),
    isShuttingDown: () => shell.lifecycle.isShuttingDown,
    deps: {
      billing,
      dashboardBilling,
      dispatcher,
      ...(jobPath && {
        jobs: jobPath.jobs,
        idempotency: new Idempotency(
          billing,
          config.REPLY_TIMEOUT_MS + IDEMPOTENCY_LEASE_MARGIN_MS,
          identifier(billing, authFailures),
          jobPath.delivered,
        ),
        background,
      }),
      limits: {
        jsonBodyBytes: config.JSON_BODY_LIMIT_BYTES,
        uploadBytes: config.UPLOAD_LIMIT_BYTES,
        requestsInProgress: config.PUBLIC_REQUESTS_MAX,
        bodyBytesInProgress: config.PUBLIC_BODY_BYTES_MAX,
        webhookAllowInsecure: config.WEBHOOK_ALLOW_INSECURE_LOOPBACK,
      },
      adminToken: config.ADMIN_TOKEN,
      authFailures,
      dashboard: {
        ...(config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
        insecureLoopbackCookie: config.DASHBOARD_INSECURE_LOOPBACK_COOKIE,
        signInsInFlight: config.DASHBOARD_SIGN_INS_IN_FLIGHT,
      },
    },
  });

  const server = await serveHttp(shell, app, config);
  // Background responses still running get a part of the budget to store their result (before
  // their replies and billing go); one that does not is ended by billing as lost, and refunded.
  shell.lifecycle.onShutdown('background responses', () =>
    background.drain(config.SHUTDOWN_TIMEOUT_MS / 4),
  );
  if (jobPath) {
    shell.lifecycle.onShutdown('replies', () => jobPath.replies.stop());
    // After every request and background response ended: none can give up on a job any more.
    shell.lifecycle.onShutdown('hold releases', async () => {
      const { pending } = jobPath.releases;
      if (pending > 0) shell.logger.error({ pending }, 'holds left unreleased at shutdown');
      jobPath.releases.stop();
      const unmarked = jobPath.delivered.pending;
      if (unmarked > 0) shell.logger.error({ unmarked }, 'delivered answers left unmarked');
      jobPath.delivered.stop();
    });
  }
  shell.lifecycle.onShutdown('internal-http', async () => {
    await Promise.all([
      billing.close(),
      dashboardBilling.close(),
      dispatcher.close(),
      jobPath?.direct?.close(),
    ]);
  });
  if (jobPath) {
    if (jobPath.ownsBus) {
      shell.lifecycle.onShutdown('rabbitmq', () => jobPath.bus.close());
      await jobPath.bus.start();
    }
    await jobPath.replies.start();
  }
  return { port: server.port };
}

/**
 * The admission role's pool: a statement not answered within BILLING_TIMEOUT_MS fails in the
 * client too (503, as billing not answering would), not in a wait.
 */
function admissionPool(url: string, config: EdgeConfig, shell: ServiceShell): pg.Pool {
  const pool = createPostgresPool(url, config.ADMISSION_DATABASE_POOL_MAX, {
    timeoutMs: config.BILLING_TIMEOUT_MS,
    clientTimeout: true,
  });
  // An idle connection's error (the server restarted) must not end the process.
  pool.on('error', (error) => shell.logger.warn({ err: error }, 'admission connection failed'));
  return pool;
}

/** The public API's way to the workers: the bus, the reply queue and the jobs on them. */
function buildJobPath(
  config: EdgeConfig,
  shell: ServiceShell,
  billing: BillingClient,
  dependencies: EdgeDependencies,
) {
  const ownsBus = dependencies.bus === undefined;
  const bus = dependencies.bus ?? createGatewayBus(config, shell.logger, { service: 'edge' });
  const delivered = new DeliveredAnswers({ billing, log: shell.logger });
  const replies = new ReplyRouter({
    bus,
    prefix: config.AMQP_PREFIX,
    logger: shell.logger,
    onAnswerAckLost: (jobId) => delivered.mark(holdIdOfJob(jobId)),
  });
  const releases = new HoldReleases({ billing });
  const direct = directJobs(config, shell);
  const jobs = new InferenceJobs({
    publisher: new JobPublisher(bus, gatewayNames(config.AMQP_PREFIX)),
    ...(direct && { direct }),
    replies,
    billing,
    releases,
    replyTimeoutMs: config.REPLY_TIMEOUT_MS,
    asyncDeadlineMs: config.ASYNC_JOB_DEADLINE_MS,
    maxGenerationMs: config.JOB_MAX_GENERATION_MS,
    publishMarkDelayMs: config.HOLD_PUBLISH_MARK_DELAY_MS,
  });
  return { ownsBus, bus, replies, jobs, releases, delivered, direct };
}

/** The workers' direct job API (ADR 0072), when `WORKER_URLS` names them. */
function directJobs(config: EdgeConfig, shell: ServiceShell): DirectJobs | undefined {
  if (config.WORKER_URLS === '') return undefined;
  if (config.WORKER_INTERNAL_TOKEN === '') {
    throw new Error('WORKER_URLS is set without WORKER_INTERNAL_TOKEN');
  }
  return new DirectJobs({
    urls: config.WORKER_URLS.split(','),
    token: config.WORKER_INTERNAL_TOKEN,
    acceptTimeoutMs: config.WORKER_ACCEPT_TIMEOUT_MS,
    connections: config.WORKER_CONNECTIONS,
    logger: shell.logger,
  });
}
