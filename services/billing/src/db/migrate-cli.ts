/**
 * `node dist/db/migrate-cli.js` (or `pnpm --filter @gateway/billing run migrate`): as the schema
 * owner (DATABASE_URL), brings the database up to the latest migration in prisma/migrations,
 * grants RUNTIME_DATABASE_ROLE exactly what billing needs (runtime-grants.ts) and, when set,
 * FINANCE_DATABASE_ROLE the finance views (finance-grants.ts), WORKER_DATABASE_ROLE the
 * hold-ending functions and EDGE_DATABASE_ROLE the API keys' admission (function-role-grants.ts),
 * then exits.
 * Exit code 0 on success (also when there was nothing to do), 1 on failure.
 */
import { loadConfigOrExit } from '@gateway/config';
import { createLogger } from '@gateway/observability';
import { billingMigrateConfigSchema } from '../config.js';
import { MIGRATIONS_DIR, migrateDatabase } from './migrate.js';

const config = loadConfigOrExit('billing-migrate', billingMigrateConfigSchema);
const logger = createLogger({ service: 'billing-migrate', level: config.LOG_LEVEL });

try {
  const result = await migrateDatabase(config.DATABASE_URL, {
    runtimeRole: config.RUNTIME_DATABASE_ROLE,
    ...(config.FINANCE_DATABASE_ROLE ? { financeRole: config.FINANCE_DATABASE_ROLE } : {}),
    ...(config.WORKER_DATABASE_ROLE ? { workerRole: config.WORKER_DATABASE_ROLE } : {}),
    ...(config.EDGE_DATABASE_ROLE ? { edgeRole: config.EDGE_DATABASE_ROLE } : {}),
    onApplied: (migration, durationMs) => logger.info({ migration, durationMs }, 'applied'),
  });
  logger.info(
    {
      migrationsDir: MIGRATIONS_DIR,
      applied: result.applied.length,
      alreadyApplied: result.alreadyApplied.length,
      ...(result.unknown.length > 0 ? { unknownInDatabase: result.unknown } : {}),
      runtimeRole: config.RUNTIME_DATABASE_ROLE,
      ...(config.FINANCE_DATABASE_ROLE ? { financeRole: config.FINANCE_DATABASE_ROLE } : {}),
      ...(config.WORKER_DATABASE_ROLE ? { workerRole: config.WORKER_DATABASE_ROLE } : {}),
      ...(config.EDGE_DATABASE_ROLE ? { edgeRole: config.EDGE_DATABASE_ROLE } : {}),
      durationMs: result.durationMs,
    },
    result.applied.length > 0 ? 'database migrated' : 'database already up to date',
  );
} catch (error) {
  logger.fatal({ err: error }, 'migration failed');
  process.exitCode = 1;
}
