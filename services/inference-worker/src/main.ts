import { loadConfigOrExit } from '@gateway/config';
import { createServiceShell } from '@gateway/runtime';
import { workerConfigSchema } from './config.js';
import { startWorkerService } from './service.js';

// Composition root: config → logger/metrics/lifecycle → the service (src/service.ts).
const config = loadConfigOrExit('inference-worker', workerConfigSchema);
const shell = createServiceShell('inference-worker', config);
await startWorkerService(config, shell);
