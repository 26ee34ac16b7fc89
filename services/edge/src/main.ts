import { loadConfigOrExit } from '@gateway/config';
import { createGatewayBus } from '@gateway/messaging';
import {
  brokerReadiness,
  createServiceApp,
  createServiceShell,
  finishApp,
  httpReadiness,
  serveHttp,
} from '@gateway/runtime';
import { edgeConfigSchema } from './config.js';

// Composition root: config → logger/metrics → clients → HTTP → ordered shutdown.
const config = loadConfigOrExit('edge', edgeConfigSchema);
const shell = createServiceShell('edge', config);
const bus = createGatewayBus(config, shell.logger);

const app = createServiceApp({
  logger: shell.logger,
  metrics: shell.metrics,
  readiness: [brokerReadiness(bus), httpReadiness('billing', config.BILLING_URL)],
  isShuttingDown: () => shell.lifecycle.isShuttingDown,
});
finishApp(app, shell.logger);

await serveHttp(shell, app, config);
shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
await bus.start();
