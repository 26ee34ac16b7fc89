import type { Static } from '@sinclair/typebox';
import { Keyring } from '@gateway/crypto';
import { createGatewayBus, gatewayNames, type MessageBus } from '@gateway/messaging';
import { createServiceApp, finishApp, serveHttp, type ServiceShell } from '@gateway/runtime';
import { settledMicroDzdCounter } from '@gateway/observability';
import { assertHoldTimings, type billingConfigSchema } from './config.js';
import { createPrismaClient, pgPoolOf, pingDatabase } from './db/client.js';
import { billingSchemaReadiness } from './db/schema-check.js';
import { createDashboard } from './dashboard/index.js';
import { BudgetRepository } from './budgets/budget-repository.js';
import { Budgets } from './budgets/budgets.js';
import { AlertRepository, AlertSettings } from './alerts/index.js';
import { startAlertEngine } from './alerts/alert-wiring.js';
import { Receipts, ReceiptRepository } from './receipts/index.js';
import {
  ResponseRepository,
  ResponseWebhookOutbox,
  ResponseWebhookRepository,
  StoredResponses,
  startWebhookOutbox,
} from './responses/index.js';
import { checkBooks, createReports } from './reports/index.js';
import { mountBillingApi } from './http/billing-app.js';
import { RequestIdempotency } from './http/request-idempotency.js';
import { createIdentity } from './identity/index.js';
import { createLedgerService } from './ledger/index.js';
import { createUsageService, UsageStore } from './usage/index.js';
import { createNodeHealthService } from './nodes/index.js';
import { instrumentBilling, passwordWorkMetrics } from './metrics.js';
import { startSettlementConsumer } from './settlements/settlement-consumer.js';

/** How often billing's outbox looks for ended background responses to announce, and how many. */
const RESPONSE_WEBHOOK_INTERVAL_MS = 1_000;
const RESPONSE_WEBHOOK_BATCH = 100;

export interface BillingDependencies {
  /** A bus to share (local mode runs every service on one in-process bus); else RabbitMQ. */
  bus?: MessageBus;
}

export type BillingConfig = Static<typeof billingConfigSchema>;

/** Prisma wraps driver errors in a multi-line banner; readiness shows only the cause. */
function databaseProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (
    /Message: `([^`]+)`/.exec(message)?.[1] ?? message.trim().split('\n').pop() ?? 'unreachable'
  );
}

/**
 * Wires and starts billing: clients → domain → HTTP → background sweeps, with shutdown steps in
 * that order on the shell's lifecycle. Returns the bound port.
 */
export async function startBillingService(
  config: BillingConfig,
  shell: ServiceShell,
  dependencies: BillingDependencies = {},
): Promise<{ port: number }> {
  assertHoldTimings(config);
  const ownsBus = dependencies.bus === undefined;
  const bus = dependencies.bus ?? createGatewayBus(config, shell.logger, { service: 'billing' });
  const prisma = createPrismaClient(config.DATABASE_URL, {
    maxConnections: config.DATABASE_POOL_MAX,
  });
  const clock = () => new Date();
  const identity = createIdentity({
    prisma,
    keyring: Keyring.parse(config.MASTER_KEY),
    tokenPrefix: config.TOKEN_PREFIX,
    clock,
    holdTtlMs: config.HOLD_TTL_MS,
    onLastUsedError: (error) => shell.logger.warn({ err: error }, 'api key last-used write failed'),
  });
  // The ledger counts its settled µDZD; holds open, invariant violations and sweeper lag join
  // the service's metrics.
  const ledger = createLedgerService({
    prisma,
    clock,
    holdPublishGraceMs: config.HOLD_PUBLISH_GRACE_MS,
    settledMicroDzd: settledMicroDzdCounter(shell.metrics.registry),
  });
  const { reports, periods } = createReports(pgPoolOf(prisma), config.REPORT_TIME_ZONE, clock);
  // The gauge counts the books' violations: the ledger's and the last closed month's (each check
  // of every closed month costs a report a month; the operator's check and the CLI do them all).
  instrumentBilling(shell.metrics.registry, {
    prisma,
    ledger: { checkInvariants: () => checkBooks(ledger, periods, { latestPeriods: 1 }) },
  });

  const app = createServiceApp({
    logger: shell.logger,
    metrics: shell.metrics,
    readiness: [
      {
        name: 'postgres',
        check: async () => {
          await pingDatabase(prisma).catch((error: unknown) => {
            throw new Error(databaseProblem(error));
          });
        },
      },
      billingSchemaReadiness(pgPoolOf(prisma)),
      // Not the broker: settles and voids over HTTP must go on while it is away.
    ],
    isShuttingDown: () => shell.lifecycle.isShuttingDown,
    accessLog: 'failures',
  });
  const requestIdempotency = new RequestIdempotency({
    run: (work) => identity.store.transaction(work),
    clock,
    keyring: identity.keyring,
    ttlMs: config.IDEMPOTENCY_TTL_MS,
  });
  const dashboard = createDashboard({
    prisma,
    clock,
    session: { idleMs: config.DASHBOARD_SESSION_IDLE_MS, maxMs: config.DASHBOARD_SESSION_MAX_MS },
    invitationTtlMs: config.DASHBOARD_INVITATION_TTL_MS,
    signInFailuresPerHour: config.DASHBOARD_SIGN_IN_FAILURES_PER_HOUR,
    passwordWork: {
      atOnce: config.DASHBOARD_PASSWORD_HASHES_AT_ONCE,
      queue: config.DASHBOARD_PASSWORD_HASH_QUEUE,
    },
    onPasswordWork: passwordWorkMetrics(shell.metrics.registry),
  });
  const usage = createUsageService({
    store: new UsageStore(pgPoolOf(prisma)),
    clock,
    retentionDays: config.USAGE_RETENTION_DAYS,
  });
  const nodeHealth = createNodeHealthService(pgPoolOf(prisma), identity.catalog, clock);
  const budgets = new Budgets(new BudgetRepository(pgPoolOf(prisma)), clock);
  const receipts = new Receipts(new ReceiptRepository(pgPoolOf(prisma)));
  const alerts = new AlertSettings(new AlertRepository(pgPoolOf(prisma)), identity.keyring);
  const responses = new StoredResponses({
    store: new ResponseRepository(pgPoolOf(prisma)),
    keyring: identity.keyring,
    clock,
    retentionDays: config.RESPONSE_RETENTION_DAYS,
    refundHold: (holdId) => ledger.refundHold(holdId),
  });
  mountBillingApi(
    app,
    {
      identity,
      ledger,
      requestIdempotency,
      dashboard,
      usage,
      nodeHealth,
      budgets,
      receipts,
      alerts,
      responses,
      reports,
      periods,
    },
    { edge: config.EDGE_INTERNAL_TOKEN, worker: config.WORKER_INTERNAL_TOKEN },
  );
  finishApp(app, shell.logger);

  // Expired holds are voided and old rate-limit windows pruned in the background.
  const stopSweeper = ledger.startSweeper({
    intervalMs: config.HOLD_SWEEP_INTERVAL_MS,
    onExpired: (count) => shell.logger.info({ count }, 'expired holds voided'),
    onError: (error) => shell.logger.error({ err: error }, 'hold sweep failed'),
  });
  // ... and expired scoped tokens that no hold names (SCOPED_TOKEN_PURGE_GRACE_MS after expiry),
  // usage records past USAGE_RETENTION_DAYS and stored responses past RESPONSE_RETENTION_DAYS.
  const pruneTimer = setInterval(() => {
    identity.rateLimiter
      .prune()
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'rate-limit prune failed'));
    identity.scopedTokens
      .purgeExpired(config.SCOPED_TOKEN_PURGE_GRACE_MS)
      .then((count) => count > 0 && shell.logger.info({ count }, 'expired scoped tokens purged'))
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'scoped-token purge failed'));
    // Ended dashboard sessions, expired invitations and ended sign-in windows.
    Promise.all([
      dashboard.sessions.purgeEnded(),
      dashboard.users.purgeExpiredInvitations(),
      dashboard.signInLimits.purgeEnded(),
    ]).catch((error: unknown) => shell.logger.warn({ err: error }, 'dashboard purge failed'));
    nodeHealth
      .prune()
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'node health prune failed'));
    usage
      .purgeExpired()
      .then((count) => count > 0 && shell.logger.info({ count }, 'old usage records purged'))
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'usage purge failed'));
    responses
      .purgeExpired()
      .then((count) => count > 0 && shell.logger.info({ count }, 'expired stored responses purged'))
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'stored response purge failed'));
    responses
      .endLost()
      .then((sweep) => {
        if (sweep.ended > 0) shell.logger.warn({ count: sweep.ended }, 'lost responses ended');
        if (sweep.failed.length > 0) {
          shell.logger.error({ responseIds: sweep.failed }, 'lost responses not ended');
        }
      })
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'lost response sweep failed'));
  }, 60_000);
  pruneTimer.unref();
  // Idempotency records past their retention are deleted, however quiet the traffic.
  const purgeTimer = setInterval(() => {
    requestIdempotency
      .purgeExpired()
      .then((count) => count > 0 && shell.logger.info({ count }, 'idempotency records purged'))
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'idempotency purge failed'));
  }, config.IDEMPOTENCY_PURGE_INTERVAL_MS);
  purgeTimer.unref();
  // Idempotency-Key claims that lapsed with their hold settled: answers charged, never sent.
  const lapsedClaimTimer = setInterval(() => {
    requestIdempotency
      .settleLapsedClaims()
      .then((ended) => {
        const refunded = ended.filter((claim) => claim.outcome === 'refunded');
        if (ended.length > 0) {
          shell.logger.warn(
            { count: ended.length, refundedHoldIds: refunded.map((claim) => claim.holdId) },
            'lapsed idempotency claims ended',
          );
        }
      })
      .catch((error: unknown) => shell.logger.warn({ err: error }, 'lapsed claim sweep failed'));
  }, config.HOLD_SWEEP_INTERVAL_MS);
  lapsedClaimTimer.unref();

  const server = await serveHttp(shell, app, config);
  if (ownsBus) await bus.start();
  const names = gatewayNames(config.AMQP_PREFIX);
  // Settlements queued by workers while billing did not answer (docs/job-protocol.md §5).
  const settlements = await startSettlementConsumer({
    bus,
    names,
    ledger,
    logger: shell.logger,
    prefetch: config.SETTLEMENT_PREFETCH,
  });
  shell.lifecycle.onShutdown('settlements', () => settlements.cancel());
  // Account alerts: evaluated and published on every replica.
  const alertEngine = startAlertEngine(config, shell, { prisma, keyring: identity.keyring, bus });
  shell.lifecycle.onShutdown('alerts', () => alertEngine.stop());
  // Background responses' webhooks: announced within a second of their end, on every
  // replica (each claims different rows).
  const stopWebhooks = startWebhookOutbox(
    new ResponseWebhookOutbox(
      new ResponseWebhookRepository(pgPoolOf(prisma)),
      identity.keyring,
      bus,
      { exchange: names.exchanges.events, routingKey: names.routingKeys.responseEnded },
    ),
    {
      intervalMs: RESPONSE_WEBHOOK_INTERVAL_MS,
      batchSize: RESPONSE_WEBHOOK_BATCH,
      onPublished: (result) => shell.logger.info(result, 'response webhooks published'),
      onError: (error) => shell.logger.warn({ err: error }, 'response webhooks not published'),
    },
  );
  shell.lifecycle.onShutdown('response webhooks', stopWebhooks);
  if (ownsBus) shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
  shell.lifecycle.onShutdown('sweeper', async () => {
    clearInterval(pruneTimer);
    clearInterval(purgeTimer);
    clearInterval(lapsedClaimTimer);
    await stopSweeper();
  });
  shell.lifecycle.onShutdown('postgres', () => prisma.$disconnect());
  return { port: server.port };
}
