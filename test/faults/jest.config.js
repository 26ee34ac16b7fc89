import { standalone } from '../jest/projects.js';

/**
 * The fault suite (`pnpm test:faults`): a separate run from `pnpm test`. It starts its own
 * PostgreSQL and RabbitMQ (it restarts them), so there is no global setup; one file, in band.
 * @type {import('jest').Config}
 */
export default {
  ...standalone,
  roots: ['<rootDir>/test/faults'],
  testMatch: ['<rootDir>/test/faults/**/*.fault.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  reporters: ['default'],
  maxWorkers: 1,
  testTimeout: 240_000,
};
