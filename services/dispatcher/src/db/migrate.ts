/**
 * Applies the dispatcher's plain SQL migrations (`migrations/NNN_name.sql`, in version order)
 * with the shared runner (@gateway/runtime `runSqlMigrations`), recorded in
 * `dispatcher_migrations`.
 *
 * Each migration runs in one transaction together with its row, so a failure leaves nothing
 * behind; a migration therefore must not contain BEGIN/COMMIT. An applied migration whose file
 * changed since is an error: history is not edited in place. A session advisory lock serialises
 * concurrent migrators (several migration runs at once). Run as the schema's owner; with
 * `runtimeRole`, that role (the one the service connects as) then gets exactly the privileges
 * of runtime-grants.ts.
 */
import { fileURLToPath } from 'node:url';
import {
  loadNumberedMigrations,
  migrationsFingerprint,
  runSqlMigrations,
  versionBookkeeping,
  type NumberedMigration,
} from '@gateway/runtime';
import { DISPATCHER_RUNTIME_GRANTS } from './runtime-grants.js';

/** `services/dispatcher/migrations`, from both `src/db` (tests) and `dist/db` (build). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Arbitrary, but fixed: every dispatcher replica must take the same lock. */
const MIGRATION_LOCK_KEY = 6_401_201;

export type Migration = NumberedMigration;

export interface MigrateResult {
  /** `<version>_<name>` of the migrations applied by this call, in order. */
  applied: string[];
  alreadyApplied: number;
}

export interface MigrateOptions {
  migrationsDir?: string;
  /** The role the service runs as: granted runtime-grants.ts after migrating. */
  runtimeRole?: string;
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return loadNumberedMigrations(dir);
}

/** Brings the database at `databaseUrl` to the latest migration. Safe to run concurrently. */
export async function migrateDatabase(
  databaseUrl: string,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const result = await runSqlMigrations(
    databaseUrl,
    loadMigrations(options.migrationsDir),
    {
      applicationName: 'dispatcher-migrate',
      lockKey: MIGRATION_LOCK_KEY,
      bookkeeping: versionBookkeeping('dispatcher_migrations'),
      grants: DISPATCHER_RUNTIME_GRANTS,
    },
    options.runtimeRole ? { runtimeRole: options.runtimeRole } : {},
  );
  return { applied: result.applied, alreadyApplied: result.alreadyApplied.length };
}

/** The runtime role of tests: the dispatcher in tests connects as it, as in a deployment. */
export const TEST_RUNTIME_ROLE = 'dispatcher_runtime';

/**
 * Test template for `createTestDatabase` (@gateway/testing): migrated once per cluster, cloned
 * per test file. The name carries a digest of the migrations, so a new or changed migration
 * gets a new template.
 */
export const dispatcherDatabaseTemplate = {
  get name(): string {
    return `dispatcher_template_${migrationsFingerprint(loadMigrations())}`;
  },
  runtimeRole: TEST_RUNTIME_ROLE,
  migrate: async (databaseUrl: string): Promise<void> => {
    await migrateDatabase(databaseUrl, { runtimeRole: TEST_RUNTIME_ROLE });
  },
};
