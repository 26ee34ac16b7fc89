export {
  createIsolatedDatabase,
  dropIsolatedDatabase,
  ensureLoginRole,
  urlAsRole,
  type DatabaseTemplate,
} from './databases.js';
export { rolePrivileges, sortedPrivileges, type RolePrivileges } from './role-privileges.js';
export { addTestBrokerUsers, type TestBrokerUser } from './broker-users.js';
export {
  startTestInfrastructure,
  type TestInfrastructure,
  type TestInfrastructureOptions,
} from './infra.js';
export { freeLoopbackPort, freeLoopbackPortBlock, waitForTcp } from './ports.js';
export { startPostgresCluster, type PostgresCluster } from './postgres.js';
export { startPostgresWithStandby, type PostgresWithStandby } from './postgres-standby.js';
export { startRabbitMqNode, type RabbitMqNode } from './rabbitmq.js';
export {
  startRabbitMqCluster,
  type RabbitMqCluster,
  type StartRabbitMqClusterOptions,
} from './rabbitmq-cluster.js';
export { startTcpBalancer, type TcpBalancer } from './tcp-balancer.js';
export {
  TEST_ENV,
  TEST_PREFIX_PATTERN,
  createTestDatabase,
  createTestRole,
  testAmqpUrl,
  testBaseDir,
  testPostgresAdminUrl,
  testServiceAmqpUrl,
  uniquePrefix,
  type TestDatabase,
} from './test-env.js';
export {
  spawnService,
  waitForStatus,
  type ServiceProcess,
  type SpawnServiceOptions,
} from './service-process.js';
export { waitFor } from './wait.js';
export { RECEIVER_HOST, createTestCertificates, type TestCertificates } from './test-ca.js';
export { faketimeLibrary, skewableClock, type SkewableClock } from './skewable-clock.js';
export {
  fundAccount,
  type FundAccountOptions,
  type FundedAccount,
  type OperatorCall,
} from './fund-account.js';
export {
  brokerUserOf,
  gatewayEnvironment,
  gatewaySecrets,
  gatewayServiceEntry,
  startGateway,
  type Gateway,
  type GatewayEnv,
  type GatewaySecrets,
  type GatewayService,
  type GatewayTopology,
  type GatewayWiring,
  type LaunchRequest,
  type Launched,
} from './gateway-stack.js';
