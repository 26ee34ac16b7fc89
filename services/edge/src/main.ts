import { loadConfigOrExit } from '@gateway/config';
import { createServiceShell } from '@gateway/runtime';
import { edgeConfigSchema } from './config.js';
import { startEdgeService } from './service.js';
import { surfaceSettingProblems } from './surfaces.js';

// Composition root: config → logger/metrics/lifecycle → the service (src/service.ts).
const config = loadConfigOrExit('edge', edgeConfigSchema, undefined, surfaceSettingProblems);
const shell = createServiceShell('edge', config);
await startEdgeService(config, shell);
