/**
 * Applies the dispatcher's plain SQL migrations (`migrations/NNN_name.sql`, in version order).
 *
 * Each migration runs in one transaction together with its row in `dispatcher_migrations`, so a
 * failure leaves nothing behind; a migration therefore must not contain BEGIN/COMMIT. An applied
 * migration whose file changed since is an error: history is not edited in place. A session
 * advisory lock serialises concurrent migrators (several migration runs at once). Run as the
 * schema's owner; with `runtimeRole`, that role (the one the service connects as) then gets
 * exactly the privileges of runtime-grants.ts.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { applyRuntimeGrants } from '@gateway/runtime';
import { DISPATCHER_RUNTIME_GRANTS } from './runtime-grants.js';

/** `services/dispatcher/migrations`, from both `src/db` (tests) and `dist/db` (build). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Arbitrary, but fixed: every dispatcher replica must take the same lock. */
const MIGRATION_LOCK_KEY = 6_401_201;
const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.sql$/;
const TRANSACTION_CONTROL = /^\s*(BEGIN|START\s+TRANSACTION|COMMIT|ROLLBACK)\s*;/im;

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS dispatcher_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`;

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  sql: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

export interface MigrateOptions {
  migrationsDir?: string;
  /** The role the service runs as: granted runtime-grants.ts after migrating. */
  runtimeRole?: string;
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const match = FILE_PATTERN.exec(file);
      if (!match) throw new Error(`migration file ${file} is not named NNN_name.sql`);
      const bytes = readFileSync(path.join(dir, file));
      const sql = bytes.toString('utf8');
      if (TRANSACTION_CONTROL.test(sql)) {
        throw new Error(`migration ${file} contains BEGIN/COMMIT; each runs in a transaction`);
      }
      const checksum = createHash('sha256').update(bytes).digest('hex');
      return { version: Number(match[1]), name: match[2]!, checksum, sql };
    });
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error('migration versions must be 1, 2, 3...');
  });
  return migrations;
}

/** Brings the database at `databaseUrl` to the latest migration. Safe to run concurrently. */
export async function migrateDatabase(
  databaseUrl: string,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const migrations = loadMigrations(options.migrationsDir);
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: 'dispatcher-migrate',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(CREATE_TABLE);
      const result = await applyPending(client, migrations);
      if (options.runtimeRole) {
        await applyRuntimeGrants(client, options.runtimeRole, DISPATCHER_RUNTIME_GRANTS);
      }
      return result;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

async function applyPending(client: pg.Client, migrations: Migration[]): Promise<MigrateResult> {
  const rows = await client.query<{ version: number; checksum: string }>(
    'SELECT version, checksum FROM dispatcher_migrations',
  );
  const applied = new Map(rows.rows.map((row) => [row.version, row.checksum]));
  const result: MigrateResult = { applied: [], alreadyApplied: 0 };
  for (const migration of migrations) {
    const checksum = applied.get(migration.version);
    if (checksum !== undefined) {
      if (checksum !== migration.checksum) {
        throw new Error(`migration ${migration.version} was modified after it was applied`);
      }
      result.alreadyApplied += 1;
      continue;
    }
    await applyOne(client, migration);
    result.applied.push(`${migration.version}_${migration.name}`);
  }
  return result;
}

async function applyOne(client: pg.Client, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    // No parameters: the simple query protocol runs the whole multi-statement script.
    await client.query(migration.sql);
    await client.query(
      'INSERT INTO dispatcher_migrations (version, name, checksum) VALUES ($1, $2, $3)',
      [migration.version, migration.name, migration.checksum],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`migration ${migration.version}_${migration.name} failed`, { cause: error });
  }
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
    const hash = createHash('sha256');
    for (const migration of loadMigrations()) hash.update(`${migration.checksum}\n`);
    return `dispatcher_template_${hash.digest('hex').slice(0, 12)}`;
  },
  runtimeRole: TEST_RUNTIME_ROLE,
  migrate: async (databaseUrl: string): Promise<void> => {
    await migrateDatabase(databaseUrl, { runtimeRole: TEST_RUNTIME_ROLE });
  },
};
