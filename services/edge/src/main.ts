import { loadConfigOrExit } from '@gateway/config';
import { createServiceShell } from '@gateway/runtime';
import { edgeConfigSchema } from './config.js';
import { startEdgeService } from './service.js';

// Composition root: config → logger/metrics/lifecycle → the service (src/service.ts).
const config = loadConfigOrExit('edge', edgeConfigSchema);
const shell = createServiceShell('edge', config);
await startEdgeService(config, shell);
