import { loadConfigOrExit } from '@gateway/config';
import { createServiceApp, createServiceShell, finishApp, serveHttp } from '@gateway/runtime';
import { billingConfigSchema } from './config.js';
import { createPrismaClient } from './db/client.js';
import { mountBillingApi } from './http/billing-app.js';
import { createIdentity } from './identity/index.js';
import { createLedgerService } from './ledger/index.js';

/** Prisma wraps driver errors in a multi-line banner; readiness shows only the cause. */
function databaseProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (
    /Message: `([^`]+)`/.exec(message)?.[1] ?? message.trim().split('\n').pop() ?? 'unreachable'
  );
}

// Composition root: config → logger/metrics → clients → domain → HTTP → ordered shutdown.
const config = loadConfigOrExit('billing', billingConfigSchema);
const shell = createServiceShell('billing', config);
const prisma = createPrismaClient(config.DATABASE_URL, {
  maxConnections: config.DATABASE_POOL_MAX,
});
const clock = () => new Date();
const identity = createIdentity({
  prisma,
  masterKeyBase64: config.MASTER_KEY,
  tokenPrefix: config.TOKEN_PREFIX,
  clock,
});
const ledger = createLedgerService({ prisma, clock, holdTtlMs: config.HOLD_TTL_MS });

const app = createServiceApp({
  logger: shell.logger,
  metrics: shell.metrics,
  readiness: [
    {
      name: 'postgres',
      check: async () => {
        await prisma.$queryRaw`SELECT 1`.catch((error: unknown) => {
          throw new Error(databaseProblem(error));
        });
      },
    },
  ],
  isShuttingDown: () => shell.lifecycle.isShuttingDown,
});
mountBillingApi(app, { identity, ledger }, config.INTERNAL_TOKEN);
finishApp(app, shell.logger);

// Expired holds are voided and old rate-limit windows pruned in the background.
const stopSweeper = ledger.startSweeper({
  intervalMs: config.HOLD_SWEEP_INTERVAL_MS,
  onExpired: (count) => shell.logger.info({ count }, 'expired holds voided'),
  onError: (error) => shell.logger.error({ err: error }, 'hold sweep failed'),
});
const pruneTimer = setInterval(() => {
  identity.rateLimiter
    .prune()
    .catch((error: unknown) => shell.logger.warn({ err: error }, 'rate-limit prune failed'));
}, 60_000);
pruneTimer.unref();

await serveHttp(shell, app, config);
shell.lifecycle.onShutdown('sweeper', async () => {
  clearInterval(pruneTimer);
  await stopSweeper();
});
shell.lifecycle.onShutdown('postgres', () => prisma.$disconnect());
