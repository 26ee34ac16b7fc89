import { loadConfigOrExit } from '@gateway/config';
import { createServiceShell } from '@gateway/runtime';
import { billingConfigSchema } from './config.js';
import { startBillingService } from './service.js';

// Composition root: config → logger/metrics/lifecycle → the service (src/service.ts).
const config = loadConfigOrExit('billing', billingConfigSchema);
const shell = createServiceShell('billing', config);
await startBillingService(config, shell);
