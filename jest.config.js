/**
 * One Jest run covers every package and service. Integration tests share one PostgreSQL
 * cluster and one RabbitMQ node started by the global setup; each test file isolates
 * itself with its own database and queue prefix (see packages/testing).
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@gateway/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  globalSetup: '<rootDir>/test/jest-global-setup.mjs',
  globalTeardown: '<rootDir>/test/jest-global-teardown.mjs',
  reporters: ['default', '<rootDir>/test/summary-reporter.mjs'],
  maxWorkers: 2,
  testTimeout: 60000,
};
