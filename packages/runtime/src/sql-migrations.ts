/**
 * The one SQL migration runner of the services that own a PostgreSQL schema (billing, the
 * dispatcher): plain `.sql` files, applied in order by the schema's owner.
 *
 * - Each migration runs in one transaction together with its bookkeeping row, so a failure
 *   leaves nothing behind (PostgreSQL DDL is transactional). A migration therefore must not
 *   contain its own BEGIN/COMMIT nor statements that cannot run in a transaction
 *   (`CREATE INDEX CONCURRENTLY`, ...).
 * - An applied migration whose file changed since is an error: history is not edited in place.
 * - A session advisory lock serialises concurrent migrators (several replicas or Jobs at once).
 * - With `runtimeRole`, that role (the one the service connects as) then gets exactly the
 *   service's runtime grants.
 *
 * - Repeatable sources (`repeatable`), if any, are applied next, whenever one changed.
 *
 * What differs per service is data: the directory layout (sql-migration-files.ts), the
 * bookkeeping table (`prismaBookkeeping` keeps Prisma Migrate's `_prisma_migrations`,
 * `versionBookkeeping` a table of its own), the lock key, the grants and the repeatables.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { applyRuntimeGrants, type RuntimeGrants } from './postgres-grants.js';
import { inTransaction } from './pg-transaction.js';
import { applyRepeatableSources, type RepeatableSources } from './repeatable-sources.js';
import type { NumberedMigration, SqlMigration } from './sql-migration-files.js';

/** The table recording which migrations ran; its rows are keyed by `keyOf`. */
export interface MigrationBookkeeping<M extends SqlMigration> {
  /** DDL creating the table when missing. */
  createTable: string;
  keyOf(migration: M): string;
  /** Applied migrations, key → checksum; throws when the table records a failed one. */
  applied(client: pg.Client): Promise<Map<string, string>>;
  /** Runs `apply` and records `migration`, inside the migration's transaction. */
  record(client: pg.Client, migration: M, apply: () => Promise<void>): Promise<void>;
}

export interface SqlMigrationTarget<M extends SqlMigration> {
  /** `application_name` of the migrator's connection. */
  applicationName: string;
  /** Every migrator of one schema takes the same session advisory lock. */
  lockKey: number;
  bookkeeping: MigrationBookkeeping<M>;
  /** What `runtimeRole` is granted after migrating. */
  grants: RuntimeGrants;
  /** Applied after the versioned migrations whenever a file changed (repeatable-sources.ts). */
  repeatable?: RepeatableSources;
}

export interface SqlMigrateOptions {
  /** Called once per migration applied. */
  onApplied?: (migration: string, durationMs: number) => void;
  /** The role the service runs as (the connecting role stays the only owner). */
  runtimeRole?: string;
  /** Other roles to give exactly their own grants after migrating (a read-only reporting role). */
  otherRoles?: readonly { role: string; grants: RuntimeGrants }[];
}

export interface SqlMigrateResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations that were already applied. */
  alreadyApplied: string[];
  /** Applied migrations this code does not know (keys; the database is newer than the code). */
  unknown: string[];
  /** Repeatable sources applied by this call (new or changed since last applied). */
  repeated: string[];
  durationMs: number;
}

/** The advisory lock key Prisma Migrate takes on PostgreSQL. */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;

/**
 * Prisma Migrate's own `_prisma_migrations` (same DDL and columns), so `prisma migrate status`
 * sees a database migrated here as up to date and this runner accepts one the CLI migrated.
 * Unlike the CLI, a failure leaves no "failed" row behind (it rolls back with the migration).
 */
export const prismaBookkeeping: MigrationBookkeeping<SqlMigration> = {
  createTable: `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`,
  keyOf: (migration) => migration.id,
  applied: async (client) => {
    const { rows } = await client.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      rolled_back_at: Date | null;
    }>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"');
    const failed = rows.filter((row) => !row.finished_at && !row.rolled_back_at);
    if (failed.length > 0) {
      const names = failed.map((row) => row.migration_name).join(', ');
      throw new Error(
        `migration(s) ${names} failed earlier (recorded by Prisma Migrate); resolve them ` +
          'first (`prisma migrate resolve`)',
      );
    }
    return new Map(
      rows
        .filter((row) => row.finished_at && !row.rolled_back_at)
        .map((row) => [row.migration_name, row.checksum]),
    );
  },
  record: async (client, migration, apply) => {
    const id = randomUUID();
    await client.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) ' +
        'VALUES ($1, $2, $3, clock_timestamp(), 0)',
      [id, migration.checksum, migration.id],
    );
    await apply();
    await client.query(
      'UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 ' +
        'WHERE id = $1',
      [id],
    );
  },
};

/** A table of its own, `(version, name, checksum, applied_at)`, keyed by version. */
export function versionBookkeeping(table: string): MigrationBookkeeping<NumberedMigration> {
  const name = pg.escapeIdentifier(table);
  return {
    createTable: `
CREATE TABLE IF NOT EXISTS ${name} (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`,
    keyOf: (migration) => String(migration.version),
    applied: async (client) => {
      const { rows } = await client.query<{ version: number; checksum: string }>(
        `SELECT version, checksum FROM ${name}`,
      );
      return new Map(rows.map((row) => [String(row.version), row.checksum]));
    },
    record: async (client, migration, apply) => {
      await apply();
      await client.query(`INSERT INTO ${name} (version, name, checksum) VALUES ($1, $2, $3)`, [
        migration.version,
        migration.name,
        migration.checksum,
      ]);
    },
  };
}

/** Brings the database at `databaseUrl` up to `migrations`. Safe to run concurrently. */
export async function runSqlMigrations<M extends SqlMigration>(
  databaseUrl: string,
  migrations: readonly M[],
  target: SqlMigrationTarget<M>,
  options: SqlMigrateOptions = {},
): Promise<SqlMigrateResult> {
  const started = performance.now();
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: target.applicationName,
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [target.lockKey]);
    try {
      await client.query(target.bookkeeping.createTable);
      const result = await applyPending(client, migrations, target.bookkeeping, options);
      const repeated = target.repeatable
        ? await applyRepeatableSources(client, target.repeatable)
        : [];
      if (options.runtimeRole) {
        await applyRuntimeGrants(client, options.runtimeRole, target.grants);
      }
      for (const { role, grants } of options.otherRoles ?? []) {
        await applyRuntimeGrants(client, role, grants);
      }
      return { ...result, repeated, durationMs: Math.round(performance.now() - started) };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [target.lockKey]);
    }
  } finally {
    await client.end();
  }
}

async function applyPending<M extends SqlMigration>(
  client: pg.Client,
  migrations: readonly M[],
  bookkeeping: MigrationBookkeeping<M>,
  options: SqlMigrateOptions,
): Promise<Omit<SqlMigrateResult, 'durationMs' | 'repeated'>> {
  const applied = await bookkeeping.applied(client);
  const known = new Set(migrations.map((migration) => bookkeeping.keyOf(migration)));
  const result = {
    applied: [] as string[],
    alreadyApplied: [] as string[],
    unknown: [...applied.keys()].filter((key) => !known.has(key)).sort(),
  };
  for (const migration of migrations) {
    const checksum = applied.get(bookkeeping.keyOf(migration));
    if (checksum !== undefined) {
      if (checksum !== migration.checksum) {
        throw new Error(
          `migration ${migration.id} was modified after it was applied ` +
            `(checksum ${checksum} in the database, ${migration.checksum} on disk)`,
        );
      }
      result.alreadyApplied.push(migration.id);
      continue;
    }
    const migrationStarted = performance.now();
    await applyOne(client, migration, bookkeeping);
    result.applied.push(migration.id);
    options.onApplied?.(migration.id, Math.round(performance.now() - migrationStarted));
  }
  return result;
}

async function applyOne<M extends SqlMigration>(
  client: pg.Client,
  migration: M,
  bookkeeping: MigrationBookkeeping<M>,
): Promise<void> {
  try {
    // No parameters: the simple query protocol runs the whole multi-statement script.
    await inTransaction(client, () =>
      bookkeeping.record(client, migration, async () => void (await client.query(migration.sql))),
    );
  } catch (error) {
    throw new Error(`migration ${migration.id} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
