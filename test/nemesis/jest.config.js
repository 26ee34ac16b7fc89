import { standalone } from '../jest/projects.js';

/**
 * The nemesis (`pnpm test:nemesis`): a run of its own, like the fault suite: its own PostgreSQL
 * pair and RabbitMQ cluster, no global setup; one file, in band. The timeout follows the run's
 * duration (run.mjs sets it).
 * @type {import('jest').Config}
 */
export default {
  ...standalone,
  roots: ['<rootDir>/test/nemesis'],
  testMatch: ['<rootDir>/test/nemesis/**/*.nemesis.ts'],
  reporters: ['default'],
  maxWorkers: 1,
};
