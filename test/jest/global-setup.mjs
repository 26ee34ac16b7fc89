// Jest loads global setup outside its module mapper, so this imports the built testing and
// messaging packages; `pnpm test:jest` builds before running Jest.
import { BROKER_SERVICES, brokerDefinitions } from '../../packages/messaging/dist/index.js';
import {
  TEST_ENV,
  TEST_PREFIX_PATTERN,
  addTestBrokerUsers,
  startTestInfrastructure,
} from '../../packages/testing/dist/index.js';

/**
 * Starts the real servers once for the whole Jest run. Failure to start fails the run:
 * integration tests never skip for lack of infrastructure.
 */
export default async function globalSetup() {
  const infra = await startTestInfrastructure();
  globalThis.__gatewayInfra = infra;
  // Each service's own broker user, with a deployment's permissions under any test prefix.
  const serviceUrls = await addTestBrokerUsers(infra.rabbitmq, BROKER_SERVICES, (users) =>
    brokerDefinitions({ users, prefixPattern: TEST_PREFIX_PATTERN }),
  ).catch(async (error) => {
    await infra.stop();
    throw error;
  });
  // Jest forks its workers after global setup, so they inherit these.
  process.env[TEST_ENV.postgresAdminUrl] = infra.postgres.adminUrl;
  process.env[TEST_ENV.amqpUrl] = infra.rabbitmq.url;
  process.env[TEST_ENV.amqpServiceUrls] = JSON.stringify(serviceUrls);
  process.env[TEST_ENV.baseDir] = infra.baseDir;
}
