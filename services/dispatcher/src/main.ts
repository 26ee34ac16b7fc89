import { loadConfigOrExit } from '@gateway/config';
import { createGatewayBus } from '@gateway/messaging';
import {
  brokerReadiness,
  createPostgresPool,
  createServiceApp,
  createServiceShell,
  finishApp,
  postgresReadiness,
  serveHttp,
} from '@gateway/runtime';
import { dispatcherConfigSchema } from './config.js';

// Composition root: config → logger/metrics → clients → HTTP → ordered shutdown.
const config = loadConfigOrExit('dispatcher', dispatcherConfigSchema);
const shell = createServiceShell('dispatcher', config);
const pool = createPostgresPool(config.DATABASE_URL, config.DATABASE_POOL_MAX);
const bus = createGatewayBus(config, shell.logger);

const app = createServiceApp({
  logger: shell.logger,
  metrics: shell.metrics,
  readiness: [postgresReadiness(pool), brokerReadiness(bus)],
  isShuttingDown: () => shell.lifecycle.isShuttingDown,
});
finishApp(app, shell.logger);

await serveHttp(shell, app, config);
shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
shell.lifecycle.onShutdown('postgres', () => pool.end());
await bus.start();
