import type { Keyring } from '@gateway/crypto';
import { gatewayNames, type MessageBus } from '@gateway/messaging';
import type { ServiceShell } from '@gateway/runtime';
import { BudgetRepository } from '../budgets/budget-repository.js';
import { pgPoolOf, type PrismaClient } from '../db/client.js';
import { AlertEngine } from './alert-engine.js';
import { AlertEvaluator } from './alert-evaluator.js';
import { AlertOutbox } from './alert-outbox.js';
import { AlertRepository } from './alert-repository.js';

interface AlertConfig {
  AMQP_PREFIX: string;
  ALERT_EVALUATE_INTERVAL_MS: number;
  ALERT_EVALUATE_BATCH_SIZE: number;
}

/** Builds and starts billing's alerts loop; logs what it sends (ids and types, never URLs). */
export function startAlertEngine(
  config: AlertConfig,
  shell: ServiceShell,
  deps: { prisma: PrismaClient; keyring: Keyring; bus: MessageBus },
): AlertEngine {
  const pool = pgPoolOf(deps.prisma);
  const repository = new AlertRepository(pool);
  const names = gatewayNames(config.AMQP_PREFIX);
  const { logger } = shell;
  const engine = new AlertEngine({
    repository,
    keyring: deps.keyring,
    evaluator: new AlertEvaluator(repository, new BudgetRepository(pool)),
    outbox: new AlertOutbox(repository, deps.keyring, deps.bus, {
      exchange: names.exchanges.events,
      routingKey: names.routingKeys.accountAlert,
    }),
    intervalMs: config.ALERT_EVALUATE_INTERVAL_MS,
    batchSize: config.ALERT_EVALUATE_BATCH_SIZE,
    clock: () => new Date(),
    onEvents: (events) =>
      logger.info(
        { alerts: events.map(({ id, accountId, type }) => ({ id, accountId, type })) },
        'account alerts raised',
      ),
    onPublished: (result) => logger.info(result, 'account alerts published'),
    onError: (error, step) => logger.warn({ err: error, step }, 'account alerts step failed'),
  });
  engine.start();
  return engine;
}
