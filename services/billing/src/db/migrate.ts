/**
 * Applies billing's Prisma migrations (`prisma/migrations/<name>/migration.sql`), then the SQL
 * functions' sources that changed (`prisma/functions/<name>.sql`), with the shared runner
 * (@gateway/runtime `runSqlMigrations`), without a Prisma schema engine.
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
  loadRepeatableSources,
  migrationsFingerprint as fingerprintOf,
  prismaBookkeeping,
  runSqlMigrations,
  type SqlMigrateOptions,
  type SqlMigrateResult,
  type SqlMigration,
} from '@gateway/runtime';
import { FINANCE_GRANTS } from './finance-grants.js';
import { EDGE_ADMISSION_GRANTS, WORKER_LEDGER_GRANTS } from './function-role-grants.js';
import { BILLING_RUNTIME_GRANTS } from './runtime-grants.js';

/** `services/billing/prisma/migrations`, from both `src/db` (tests) and `dist/db` (build). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));

/**
 * `services/billing/prisma/functions`: each SQL function's live definition, applied again after
 * the migrations whenever its file changed (prisma/functions/README.md).
 */
export const FUNCTIONS_DIR = fileURLToPath(new URL('../../prisma/functions/', import.meta.url));

/** `id` is the directory name, e.g. `20261121005140_init`; applied in lexicographic order. */
export type Migration = SqlMigration;
export type MigrateResult = SqlMigrateResult;

export interface MigrateOptions extends SqlMigrateOptions {
  migrationsDir?: string;
  /** The function sources to apply after the migrations; null: none (a partial history). */
  functionsDir?: string | null;
  /** Finance's BI role: then granted SELECT on the finance views only (finance-grants.ts). */
  financeRole?: string;
  /** The inference worker's ledger role: may execute the hold-ending functions only. */
  workerRole?: string;
  /** Edge's admission role: may execute the API keys' admission and a key's last use only. */
  edgeRole?: string;
}

/** Reads the migrations directory, in the order they must be applied. */
export function loadMigrations(migrationsDir: string = MIGRATIONS_DIR): Migration[] {
  return loadMigrationDirectories(migrationsDir);
}

/**
 * A short digest of all migrations and function sources (names and checksums): changes
 * whenever one does (it names the test template databases).
 */
export function migrationsFingerprint(migrationsDir: string = MIGRATIONS_DIR): string {
  return fingerprintOf([...loadMigrations(migrationsDir), ...loadRepeatableSources(FUNCTIONS_DIR)]);
}

/**
 * Brings the database at `databaseUrl` up to the latest migration. Safe to run concurrently.
 * With `runtimeRole`, that role then gets exactly the privileges of `runtime-grants.ts`.
 */
export async function migrateDatabase(
  databaseUrl: string,
  {
    migrationsDir,
    functionsDir = FUNCTIONS_DIR,
    financeRole,
    workerRole,
    edgeRole,
    ...options
  }: MigrateOptions = {},
): Promise<MigrateResult> {
  return runSqlMigrations(
    databaseUrl,
    loadMigrations(migrationsDir),
    {
      applicationName: 'billing-migrate',
      lockKey: PRISMA_MIGRATE_LOCK_KEY,
      bookkeeping: prismaBookkeeping,
      grants: BILLING_RUNTIME_GRANTS,
      ...(functionsDir === null
        ? {}
        : {
            repeatable: {
              table: '_function_sources',
              sources: loadRepeatableSources(functionsDir),
            },
          }),
    },
    {
      ...options,
      otherRoles: [
        ...(financeRole ? [{ role: financeRole, grants: FINANCE_GRANTS }] : []),
        ...(workerRole ? [{ role: workerRole, grants: WORKER_LEDGER_GRANTS }] : []),
        ...(edgeRole ? [{ role: edgeRole, grants: EDGE_ADMISSION_GRANTS }] : []),
      ],
    },
  );
}
