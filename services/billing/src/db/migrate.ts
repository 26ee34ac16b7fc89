/**
 * Applies billing's Prisma migrations (`prisma/migrations/<name>/migration.sql`) with the shared
 * runner (@gateway/runtime `runSqlMigrations`), without a Prisma schema engine.
 *
 * Why not `prisma migrate deploy`: with no native engine available (air-gapped installs), the
 * Prisma 6.19 CLI must run its WASM engine through a driver adapter, which needs two
 * workarounds (see prisma.config.ts) and then lingers ~10 s after finishing. Applying plain SQL
 * files is simple, takes tens of milliseconds and has no such defects.
 *
 * Compatibility with the Prisma CLI is kept on purpose: migrations are recorded in Prisma's own
 * `_prisma_migrations` table (same columns, checksum = SHA-256 hex of the file's bytes), and
 * the same advisory lock as Prisma Migrate serialises concurrent migrators, so
 * `prisma migrate status` / `prisma migrate deploy` see a database migrated here as up to
 * date, and this applier accepts a database migrated by the CLI.
 *
 * Differences from `prisma migrate deploy`, all deliberate:
 * - each migration runs in one transaction together with its `_prisma_migrations` row, so a
 *   failed migration leaves nothing behind (PostgreSQL DDL is transactional) instead of a
 *   "failed migration" row that needs `prisma migrate resolve`. Consequently a migration must
 *   not contain its own `BEGIN`/`COMMIT` (Prisma's diff emits them for some enum changes:
 *   delete those lines) nor statements that cannot run in a transaction
 *   (`CREATE INDEX CONCURRENTLY`, ...);
 * - an applied migration whose file changed since is an error (Prisma only warns): the
 *   history of a money database is not edited in place.
 */
import { fileURLToPath } from 'node:url';
import {
  PRISMA_MIGRATE_LOCK_KEY,
  loadMigrationDirectories,
  migrationsFingerprint as fingerprintOf,
  prismaBookkeeping,
  runSqlMigrations,
  type SqlMigrateOptions,
  type SqlMigrateResult,
  type SqlMigration,
} from '@gateway/runtime';
import { BILLING_RUNTIME_GRANTS } from './runtime-grants.js';

/** `services/billing/prisma/migrations`, from both `src/db` (tests) and `dist/db` (build). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));

/** `id` is the directory name, e.g. `20261121005140_init`; applied in lexicographic order. */
export type Migration = SqlMigration;
export type MigrateResult = SqlMigrateResult;

export interface MigrateOptions extends SqlMigrateOptions {
  migrationsDir?: string;
}

/** Reads the migrations directory, in the order they must be applied. */
export function loadMigrations(migrationsDir: string = MIGRATIONS_DIR): Migration[] {
  return loadMigrationDirectories(migrationsDir);
}

/** A short digest of all migrations (names and checksums): changes whenever one does. */
export function migrationsFingerprint(migrationsDir: string = MIGRATIONS_DIR): string {
  return fingerprintOf(loadMigrations(migrationsDir));
}

/**
 * Brings the database at `databaseUrl` up to the latest migration. Safe to run concurrently.
 * With `runtimeRole`, that role then gets exactly the privileges of `runtime-grants.ts`.
 */
export async function migrateDatabase(
  databaseUrl: string,
  { migrationsDir, ...options }: MigrateOptions = {},
): Promise<MigrateResult> {
  return runSqlMigrations(
    databaseUrl,
    loadMigrations(migrationsDir),
    {
      applicationName: 'billing-migrate',
      lockKey: PRISMA_MIGRATE_LOCK_KEY,
      bookkeeping: prismaBookkeeping,
      grants: BILLING_RUNTIME_GRANTS,
    },
    options,
  );
}
