import { loadConfigOrExit } from '@gateway/config';
import {
  createPostgresPool,
  createServiceApp,
  createServiceShell,
  finishApp,
  postgresReadiness,
  serveHttp,
} from '@gateway/runtime';
import { billingConfigSchema } from './config.js';

// Composition root: config → logger/metrics → clients → HTTP → ordered shutdown.
const config = loadConfigOrExit('billing', billingConfigSchema);
const shell = createServiceShell('billing', config);
const pool = createPostgresPool(config.DATABASE_URL, config.DATABASE_POOL_MAX);

const app = createServiceApp({
  logger: shell.logger,
  metrics: shell.metrics,
  readiness: [postgresReadiness(pool)],
  isShuttingDown: () => shell.lifecycle.isShuttingDown,
});
finishApp(app, shell.logger);

const server = await serveHttp(shell, app, config);
shell.lifecycle.onShutdown('http', () => server.close(config.SHUTDOWN_TIMEOUT_MS / 2));
shell.lifecycle.onShutdown('postgres', () => pool.end());
