export {
  answerBeforeBodyAndClose,
  asGatewayError,
  errorHandler,
  notFoundHandler,
} from './errors.js';
export { errorAnswerOf, rateLimitDecisionOf } from './error-answer.js';
export { listen, type ListenOptions, type RunningServer } from './http-server.js';
export { Lifecycle, type LifecycleOptions } from './lifecycle.js';
export {
  brokerReadiness,
  httpReadiness,
  opsRoutes,
  READINESS_CHECK_TIMEOUT_MS,
  type ReadinessCheck,
} from './ops-routes.js';
export {
  BODY_IDLE_TIMEOUT_MS,
  JSON_MAX_DEPTH,
  REQUEST_ID_HEADER,
  bodyIdleTimeout,
  checkJsonValue,
  createServiceApp,
  currentRequestId,
  finishApp,
  httpMetrics,
  jsonBodyParser,
  requestId,
  requestIdFor,
  pathOf,
  requestLogger,
  withRequestId,
  withoutRequestId,
  type JsonBodyOptions,
  type ServiceAppOptions,
} from './app.js';
export { createPostgresPool, postgresReadiness } from './postgres.js';
export { inPoolTransaction } from './pg-transaction.js';
export { applyRuntimeGrants, type RuntimeGrants, type TablePrivilege } from './postgres-grants.js';
export {
  loadMigrationDirectories,
  loadNumberedMigrations,
  migrationsFingerprint,
  readMigrationFile,
  type NumberedMigration,
  type SqlMigration,
} from './sql-migration-files.js';
export { loadRepeatableSources, type RepeatableSources } from './repeatable-sources.js';
export {
  PRISMA_MIGRATE_LOCK_KEY,
  prismaBookkeeping,
  runSqlMigrations,
  versionBookkeeping,
  type MigrationBookkeeping,
  type SqlMigrateOptions,
  type SqlMigrateResult,
  type SqlMigrationTarget,
} from './sql-migrations.js';
export {
  createServiceShell,
  serveHttp,
  type ServiceShell,
  type ShellConfig,
  type ShellOptions,
} from './shell.js';
export {
  INTERNAL_TOKEN_HEADER,
  allowInternalCallers,
  createInternalHttp,
  dependencyUnavailable,
  headerOf,
  identifyInternalCaller,
  internalCallerMatcher,
  internalCallerOf,
  jsonOf,
  type InternalHttp,
  type InternalHttpOptions,
  type InternalRequest,
  type InternalResponse,
} from './internal-http.js';
export {
  batchOrEach,
  NaturalBatcher,
  settled,
  type ItemResult,
  type NaturalBatcherOptions,
} from './natural-batcher.js';
export {
  addressRefusal,
  bareHostname,
  urlRefusal,
  type DestinationPolicy,
} from './destination-policy.js';
export { EXPRESS_METHOD, serveRoute, type RouteCall, type RouteHandler } from './route-server.js';
