import { loadConfigOrExit } from '@gateway/config';
import { createServiceShell } from '@gateway/runtime';
import { dispatcherConfigSchema } from './config.js';
import { startDispatcherService } from './service.js';

// Composition root: config → logger/metrics/lifecycle → the service (src/service.ts).
const config = loadConfigOrExit('dispatcher', dispatcherConfigSchema);
const shell = createServiceShell('dispatcher', config);
await startDispatcherService(config, shell);
