import { standalone, withServers } from '../jest/projects.js';

/**
 * The timing suite (`pnpm test:timing`, after `pnpm test` in infra/local/test.sh): tests that
 * compare latencies within one run (a paying client's chat p99 with and without a sign-in
 * flood). They run alone, one file at a time, after the main run: beside Jest's other workers,
 * each starting and stopping services of its own, the quiet and the busy window of one test saw
 * different machines (a quiet p99 of 144 ms in one test, 420 ms in the next, same run). The same
 * PostgreSQL and RabbitMQ global setup as the main run.
 * @type {import('jest').Config}
 */
export default {
  ...standalone,
  ...withServers,
  testMatch: ['<rootDir>/test/**/*.timing.ts'],
  maxWorkers: 1,
  testTimeout: 60000,
};
