/**
 * `node dist/db/migrate-cli.js` (or `pnpm --filter @gateway/dispatcher run migrate`): brings the
 * database at DATABASE_URL to the latest migration and exits (0 on success, 1 on failure).
 * The service also migrates on start; this is for deployments that migrate as a separate step.
 */
import { createLogger } from '@gateway/observability';
import { migrateDatabase } from './migrate.js';

const logger = createLogger({
  service: 'dispatcher-migrate',
  level: process.env.LOG_LEVEL ?? 'info',
});
const databaseUrl = process.env.DATABASE_URL;

if (!databaseUrl) {
  logger.fatal('DATABASE_URL is not set');
  process.exitCode = 1;
} else {
  try {
    const result = await migrateDatabase(databaseUrl);
    logger.info(result, result.applied.length > 0 ? 'database migrated' : 'database up to date');
  } catch (error) {
    logger.fatal({ err: error }, 'migration failed');
    process.exitCode = 1;
  }
}
