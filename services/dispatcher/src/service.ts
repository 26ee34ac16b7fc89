import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGatewayBus, gatewayNames, type Consumer, type MessageBus } from '@gateway/messaging';
import {
  brokerReadiness,
  createPostgresPool,
  createServiceApp,
  finishApp,
  postgresReadiness,
  serveHttp,
  type ServiceShell,
} from '@gateway/runtime';
import type { DispatcherConfig } from './config.js';
import { assertSchemaCurrent } from './db/schema-check.js';
import { completionHandler } from './deliveries/intake.js';
import { createDispatcher } from './dispatcher.js';
import { mountInternalApi } from './http/internal-routes.js';

/** Completion events handled at once; each is one small insert. */
const CONSUMER_PREFETCH = 16;
const SCHEMA_RETRY_MS = 2_000;

export interface DispatcherDependencies {
  /** A bus to share (local mode runs every service on one in-process bus); else RabbitMQ. */
  bus?: MessageBus;
}

/**
 * Wires and starts the dispatcher: pool → bus → domain → HTTP → schema check → consumer and
 * dispatch loop, with shutdown steps in that order. Returns the bound port.
 */
export async function startDispatcherService(
  config: DispatcherConfig,
  shell: ServiceShell,
  dependencies: DispatcherDependencies = {},
): Promise<{ port: number }> {
  const pool = createPostgresPool(config.DATABASE_URL, config.DATABASE_POOL_MAX);
  // An idle connection dropped by the server (restart, failover) must not crash the process;
  // the pool replaces it on the next query.
  pool.on('error', (error) => shell.logger.warn({ err: error }, 'idle database connection lost'));
  // Nor one lost while a transaction holds it: pg then emits 'error' on that client between its
  // statements, when the pool's listener is off it (billing's db/client.ts has the test).
  pool.on('connect', (client) => client.on('error', () => {}));
  const ownsBus = dependencies.bus === undefined;
  const bus = dependencies.bus ?? createGatewayBus(config, shell.logger, { service: 'dispatcher' });
  const dispatcher = createDispatcher(config, {
    pool,
    logger: shell.logger,
    registry: shell.metrics.registry,
    ...(config.WEBHOOK_CA_FILE ? { extraCaPem: readFileSync(config.WEBHOOK_CA_FILE, 'utf8') } : {}),
  });
  if (config.WEBHOOK_ALLOW_INSECURE_LOOPBACK) {
    shell.logger.warn('WEBHOOK_ALLOW_INSECURE_LOOPBACK is on: http:// and loopback allowed');
  }

  let schemaReady = false;
  const app = createServiceApp({
    logger: shell.logger,
    metrics: shell.metrics,
    readiness: [
      postgresReadiness(pool),
      brokerReadiness(bus),
      {
        name: 'schema',
        check: async () => {
          if (!schemaReady) throw new Error('schema not migrated yet');
        },
      },
    ],
    isShuttingDown: () => shell.lifecycle.isShuttingDown,
  });
  mountInternalApi(app, dispatcher, config.INTERNAL_TOKEN);
  finishApp(app, shell.logger);

  let consumer: Consumer | undefined;
  const server = await serveHttp(shell, app, config);
  shell.lifecycle.onShutdown('completions consumer', async () => consumer?.cancel());
  shell.lifecycle.onShutdown('dispatch loop', () => dispatcher.loop.stop());
  if (ownsBus) shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
  shell.lifecycle.onShutdown('webhook client', async () => dispatcher.client.close());
  shell.lifecycle.onShutdown('postgres', () => pool.end());

  /**
   * The migration runs as the schema's owner, apart (migrate-cli); this process connects as a
   * role that can run no DDL. Until the schema is current it stays unready instead of
   * crash-looping (the migration may still be running, or the database be unreachable).
   */
  async function waitForSchema(): Promise<void> {
    while (!shell.lifecycle.isShuttingDown) {
      try {
        await assertSchemaCurrent(pool);
        shell.logger.info('database schema current');
        schemaReady = true;
        return;
      } catch (error) {
        shell.logger.warn({ err: error }, 'database schema not ready; retrying');
        await sleep(SCHEMA_RETRY_MS);
      }
    }
  }

  if (ownsBus) await bus.start();
  await waitForSchema();
  if (schemaReady && !shell.lifecycle.isShuttingDown) {
    const { queues } = gatewayNames(config.AMQP_PREFIX);
    consumer = await bus.consume(
      queues.webhookCompletions,
      completionHandler(dispatcher.intake, shell.logger, () => dispatcher.loop.nudge()),
      { prefetch: CONSUMER_PREFETCH },
    );
    dispatcher.loop.start();
  }
  return { port: server.port };
}
