/**
 * `node dist/db/migrate-cli.js` (or `pnpm --filter @gateway/billing run migrate`): brings the
 * database at DATABASE_URL up to the latest migration in prisma/migrations, then exits.
 * Exit code 0 on success (also when there was nothing to do), 1 on failure.
 */
import { createLogger } from '@gateway/observability';
import { MIGRATIONS_DIR, migrateDatabase } from './migrate.js';

const logger = createLogger({ service: 'billing-migrate', level: process.env.LOG_LEVEL ?? 'info' });
const databaseUrl = process.env.DATABASE_URL;

if (!databaseUrl) {
  logger.fatal('DATABASE_URL is not set');
  process.exitCode = 1;
} else {
  try {
    const result = await migrateDatabase(databaseUrl, {
      onApplied: (migration, durationMs) => logger.info({ migration, durationMs }, 'applied'),
    });
    logger.info(
      {
        migrationsDir: MIGRATIONS_DIR,
        applied: result.applied.length,
        alreadyApplied: result.alreadyApplied.length,
        ...(result.unknown.length > 0 ? { unknownInDatabase: result.unknown } : {}),
        durationMs: result.durationMs,
      },
      result.applied.length > 0 ? 'database migrated' : 'database already up to date',
    );
  } catch (error) {
    logger.fatal({ err: error }, 'migration failed');
    process.exitCode = 1;
  }
}
