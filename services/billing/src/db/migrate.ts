/**
 * Applies billing's Prisma migrations (`prisma/migrations/<name>/migration.sql`) without a
 * Prisma schema engine.
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
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { applyRuntimeGrants } from '@gateway/runtime';
import { BILLING_RUNTIME_GRANTS } from './runtime-grants.js';

/** `services/billing/prisma/migrations`, from both `src/db` (tests) and `dist/db` (build). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));

/** The advisory lock key Prisma Migrate takes on PostgreSQL. */
const PRISMA_MIGRATE_LOCK = 72707369;

/** Prisma's own DDL for its bookkeeping table (PostgreSQL). */
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Transaction control on a line of its own (plpgsql's block `BEGIN` takes no semicolon; `END;`
 * is left alone because it also closes plpgsql blocks).
 */
const TRANSACTION_CONTROL = /^\s*(BEGIN|START\s+TRANSACTION|COMMIT|ROLLBACK)\s*;/im;

export interface Migration {
  /** Directory name, e.g. `20261121005140_init`; applied in lexicographic order. */
  name: string;
  /** SHA-256 hex of migration.sql, as Prisma computes it. */
  checksum: string;
  sql: string;
}

export interface MigrateResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations that were already applied. */
  alreadyApplied: string[];
  /** Applied migrations this code does not know (the database is newer than the code). */
  unknown: string[];
  durationMs: number;
}

export interface MigrateOptions {
  migrationsDir?: string;
  /** Called once per migration applied. */
  onApplied?: (migration: string, durationMs: number) => void;
  /**
   * The role the service runs as: after migrating, it gets exactly the privileges of
   * `runtime-grants.ts` (the connecting role stays the only owner).
   */
  runtimeRole?: string;
}

/** Reads the migrations directory, in the order they must be applied. */
export function loadMigrations(migrationsDir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      if (!existsSync(file)) throw new Error(`migration ${name} has no migration.sql`);
      const bytes = readFileSync(file);
      const sql = bytes.toString('utf8');
      if (TRANSACTION_CONTROL.test(sql)) {
        throw new Error(
          `migration ${name} contains BEGIN/COMMIT: each migration already runs in a ` +
            'transaction; remove those lines',
        );
      }
      return { name, checksum: createHash('sha256').update(bytes).digest('hex'), sql };
    });
}

/** A short digest of all migrations (names and checksums): changes whenever one does. */
export function migrationsFingerprint(migrationsDir: string = MIGRATIONS_DIR): string {
  const hash = createHash('sha256');
  for (const migration of loadMigrations(migrationsDir)) {
    hash.update(`${migration.name}:${migration.checksum}\n`);
  }
  return hash.digest('hex').slice(0, 12);
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** Brings the database at `databaseUrl` up to the latest migration. Safe to run concurrently. */
export async function migrateDatabase(
  databaseUrl: string,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const started = performance.now();
  const migrations = loadMigrations(options.migrationsDir);
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: 'billing-migrate',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const rows = (
        await client.query<AppliedRow>(
          'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
        )
      ).rows;
      const failed = rows.filter((row) => !row.finished_at && !row.rolled_back_at);
      if (failed.length > 0) {
        const names = failed.map((row) => row.migration_name).join(', ');
        throw new Error(
          `migration(s) ${names} failed earlier (recorded by Prisma Migrate); resolve them ` +
            'first (`prisma migrate resolve`)',
        );
      }
      const applied = new Map(
        rows
          .filter((row) => row.finished_at && !row.rolled_back_at)
          .map((row) => [row.migration_name, row.checksum]),
      );
      const known = new Set(migrations.map((migration) => migration.name));
      const result: MigrateResult = {
        applied: [],
        alreadyApplied: [],
        unknown: [...applied.keys()].filter((name) => !known.has(name)).sort(),
        durationMs: 0,
      };
      for (const migration of migrations) {
        const checksum = applied.get(migration.name);
        if (checksum !== undefined) {
          if (checksum !== migration.checksum) {
            throw new Error(
              `migration ${migration.name} was modified after it was applied ` +
                `(checksum ${checksum} in the database, ${migration.checksum} on disk)`,
            );
          }
          result.alreadyApplied.push(migration.name);
          continue;
        }
        const migrationStarted = performance.now();
        await applyOne(client, migration);
        result.applied.push(migration.name);
        options.onApplied?.(migration.name, Math.round(performance.now() - migrationStarted));
      }
      if (options.runtimeRole) {
        await applyRuntimeGrants(client, options.runtimeRole, BILLING_RUNTIME_GRANTS);
      }
      result.durationMs = Math.round(performance.now() - started);
      return result;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]);
    }
  } finally {
    await client.end();
  }
}

async function applyOne(client: pg.Client, migration: Migration): Promise<void> {
  const id = randomUUID();
  await client.query('BEGIN');
  try {
    await client.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) ' +
        'VALUES ($1, $2, $3, clock_timestamp(), 0)',
      [id, migration.checksum, migration.name],
    );
    // No parameters: the simple query protocol runs the whole multi-statement script.
    await client.query(migration.sql);
    await client.query(
      'UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 ' +
        'WHERE id = $1',
      [id],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
