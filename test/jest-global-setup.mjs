// Jest loads global setup outside its module mapper, so this imports the built testing
// package; `pnpm test:jest` builds before running Jest.
import { TEST_ENV, startTestInfrastructure } from '../packages/testing/dist/index.js';

/**
 * Starts the real servers once for the whole Jest run. Failure to start fails the run:
 * integration tests never skip for lack of infrastructure.
 */
export default async function globalSetup() {
  const infra = await startTestInfrastructure();
  globalThis.__gatewayInfra = infra;
  // Jest forks its workers after global setup, so they inherit these.
  process.env[TEST_ENV.postgresAdminUrl] = infra.postgres.adminUrl;
  process.env[TEST_ENV.amqpUrl] = infra.rabbitmq.url;
  process.env[TEST_ENV.baseDir] = infra.baseDir;
}
