/**
 * Repeatable sources: SQL files that define an object in full (`CREATE OR REPLACE FUNCTION ...`)
 * and are applied again whenever their bytes change, after the versioned migrations, as
 * Flyway's repeatable migrations are. A function's live definition is then one file, changed in
 * place, instead of a copy in every migration that changes it.
 *
 * What stays in versioned migrations: whatever a `CREATE OR REPLACE` cannot do (types and their
 * attributes, tables, a changed signature or result type, which needs the old function
 * dropped first) and a function a migration itself needs before the sources run (a trigger on
 * it, a backfill calling it).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inTransaction } from './pg-transaction.js';
import { readMigrationFile, type SqlMigration } from './sql-migration-files.js';

export interface RepeatableSources {
  /** The table recording each source's checksum when it was last applied. */
  table: string;
  /** Applied in this order (by file name). */
  sources: readonly SqlMigration[];
}

/** `<name>.sql` files of a directory, by name; `id` is the name without `.sql`. */
export function loadRepeatableSources(dir: string): SqlMigration[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => readMigrationFile(path.join(dir, file), file.replace(/\.sql$/, '')));
}

/**
 * Applies the sources whose checksum differs from the recorded one, all in one transaction,
 * and forgets the records of files that are gone. Returns the ids applied. The caller holds
 * the migrators' advisory lock.
 */
export async function applyRepeatableSources(
  client: pg.Client,
  { table, sources }: RepeatableSources,
): Promise<string[]> {
  const name = pg.escapeIdentifier(table);
  await client.query(`
CREATE TABLE IF NOT EXISTS ${name} (
    name       text PRIMARY KEY,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`);
  const { rows } = await client.query<{ name: string; checksum: string }>(
    `SELECT name, checksum FROM ${name}`,
  );
  const recorded = new Map(rows.map((row) => [row.name, row.checksum]));
  const changed = sources.filter((source) => recorded.get(source.id) !== source.checksum);
  const present = new Set(sources.map((source) => source.id));
  const gone = [...recorded.keys()].filter((id) => !present.has(id));
  if (changed.length === 0 && gone.length === 0) return [];
  await inTransaction(client, async () => {
    // As pg_dump's restores do: a body may call a function a later file defines. Each file's
    // body is checked on its own by the services' tests (billing's functions.integration.test.ts).
    await client.query('SET LOCAL check_function_bodies = off');
    for (const source of changed) await applyOne(client, name, source);
    if (gone.length > 0) await client.query(`DELETE FROM ${name} WHERE name = ANY($1)`, [gone]);
  });
  return changed.map((source) => source.id);
}

async function applyOne(client: pg.Client, table: string, source: SqlMigration): Promise<void> {
  try {
    // No parameters: the simple query protocol runs the whole file.
    await client.query(source.sql);
  } catch (error) {
    throw new Error(`repeatable source ${source.id} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  await client.query(
    `INSERT INTO ${table} (name, checksum) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = clock_timestamp()`,
    [source.id, source.checksum],
  );
}
