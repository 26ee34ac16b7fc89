import { fileURLToPath } from 'node:url';

/**
 * The Jest projects every config of the repository is built from. A test's project follows from
 * its name and place alone:
 *
 * - unit: every `*.test.ts` that is not one of the below. No build, no PostgreSQL, no RabbitMQ:
 *   the servers' addresses are removed before each file (`unit-setup.js`), so a unit test that
 *   reaches for them fails, even inside the full run.
 * - integration: `*.integration.test.ts` beside the code they test: real PostgreSQL and
 *   RabbitMQ from the global setup.
 * - e2e: `test/e2e/`, `test/clients/` (the client libraries, a package of their own),
 *   `test/abuse/` and `test/local/` (the quick start): the services as processes, over HTTP.
 * - browser: `test/browser/`: the dashboard in Chromium.
 */

/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  rootDir: fileURLToPath(new URL('../..', import.meta.url)),
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@gateway/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
};

/** Starts PostgreSQL and RabbitMQ once per run (Jest runs one global setup per distinct file). */
export const withServers = {
  globalSetup: '<rootDir>/test/jest/global-setup.mjs',
  globalTeardown: '<rootDir>/test/jest/global-teardown.mjs',
};

const NOT_UNIT = [
  '\\.integration\\.test\\.ts$',
  '<rootDir>/test/(e2e|clients|abuse|local|browser)/',
  '/node_modules/',
];

export const unit = {
  ...shared,
  displayName: 'unit',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: NOT_UNIT,
  setupFiles: ['<rootDir>/test/jest/unit-setup.js'],
};

export const integration = {
  ...shared,
  ...withServers,
  displayName: 'integration',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/*.integration.test.ts'],
};

export const e2e = {
  ...shared,
  ...withServers,
  displayName: 'e2e',
  roots: ['<rootDir>/test'],
  testMatch: ['<rootDir>/test/{e2e,clients,abuse,local}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '\\.integration\\.test\\.ts$'],
};

export const browser = {
  ...shared,
  ...withServers,
  displayName: 'browser',
  roots: ['<rootDir>/test/browser'],
  testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
};

/** For the suites that run alone (faults, timing): the shared options, their own match. */
export const standalone = shared;
