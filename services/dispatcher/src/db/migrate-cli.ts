/**
 * `node dist/db/migrate-cli.js` (or `pnpm --filter @gateway/dispatcher run migrate`): as the
 * schema owner (DATABASE_URL), brings the database to the latest migration, grants
 * RUNTIME_DATABASE_ROLE exactly what the dispatcher needs (runtime-grants.ts), then exits
 * (0 on success, also when there was nothing to do; 1 on failure). The service itself does not
 * migrate: it waits, unready, until this has run (src/db/schema-check.ts).
 */
import { loadConfigOrExit } from '@gateway/config';
import { createLogger } from '@gateway/observability';
import { dispatcherMigrateConfigSchema } from '../config.js';
import { migrateDatabase } from './migrate.js';

const config = loadConfigOrExit('dispatcher-migrate', dispatcherMigrateConfigSchema);
const logger = createLogger({ service: 'dispatcher-migrate', level: config.LOG_LEVEL });

try {
  const result = await migrateDatabase(config.DATABASE_URL, {
    runtimeRole: config.RUNTIME_DATABASE_ROLE,
  });
  logger.info(
    { ...result, runtimeRole: config.RUNTIME_DATABASE_ROLE },
    result.applied.length > 0 ? 'database migrated' : 'database up to date',
  );
} catch (error) {
  logger.fatal({ err: error }, 'migration failed');
  process.exitCode = 1;
}
