import { browser, e2e, integration, unit } from './test/jest/projects.js';

/*
 * Every test of the repository in one run (`pnpm test:jest`), as four projects that can also run
 * alone: `pnpm test:unit` (no build, no servers), `test:integration`, `test:e2e`,
 * `test:browser`, each taking test paths and Jest's options after it. What belongs where:
 * test/jest/projects.js. The servers are shared: one PostgreSQL cluster and one RabbitMQ node for
 * the whole run, each test file isolating itself with its own database and queue prefix
 * (packages/testing).
 */
const PROJECTS = [unit, integration, e2e, browser];

/**
 * `JEST_PROJECT=unit` (what `pnpm test:unit` sets) keeps one project. An environment variable
 * rather than `--selectProjects`, whose list would swallow the test paths given after it.
 */
function selected() {
  const only = process.env.JEST_PROJECT;
  if (!only) return PROJECTS;
  const project = PROJECTS.find((candidate) => candidate.displayName === only);
  if (!project) {
    const names = PROJECTS.map((candidate) => candidate.displayName).join(', ');
    throw new Error(`JEST_PROJECT=${only}: not one of ${names}`);
  }
  return [project];
}

/** @type {import('jest').Config} */
export default {
  projects: selected(),
  reporters: ['default', '<rootDir>/test/jest/summary-reporter.mjs'],
  maxWorkers: 2,
  testTimeout: 60000,
};
