import { browser, e2e, integration, unit } from './test/jest/projects.js';

/**
 * Every test of the repository in one run (`pnpm test:jest`), as four projects that can also run
 * alone: `pnpm test:unit` (no build, no servers), `test:integration`, `test:e2e`,
 * `test:browser`. What belongs where: test/jest/projects.js. The servers are shared: one
 * PostgreSQL cluster and one RabbitMQ node for the whole run, each test file isolating itself
 * with its own database and queue prefix (packages/testing).
 * @type {import('jest').Config}
 */
export default {
  projects: [unit, integration, e2e, browser],
  reporters: ['default', '<rootDir>/test/jest/summary-reporter.mjs'],
  maxWorkers: 2,
  testTimeout: 60000,
};
