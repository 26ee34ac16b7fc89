import { loadConfigOrExit } from '@gateway/config';
import { createGatewayBus } from '@gateway/messaging';
import {
  brokerReadiness,
  createServiceApp,
  createServiceShell,
  finishApp,
  serveHttp,
} from '@gateway/runtime';
import { workerConfigSchema } from './config.js';

// Composition root: config → logger/metrics → clients → HTTP → ordered shutdown.
const config = loadConfigOrExit('inference-worker', workerConfigSchema);
const shell = createServiceShell('inference-worker', config);
const bus = createGatewayBus(config, shell.logger);

const app = createServiceApp({
  logger: shell.logger,
  metrics: shell.metrics,
  readiness: [brokerReadiness(bus)],
  isShuttingDown: () => shell.lifecycle.isShuttingDown,
});
finishApp(app, shell.logger);

await serveHttp(shell, app, config);
shell.lifecycle.onShutdown('rabbitmq', () => bus.close());
await bus.start();
