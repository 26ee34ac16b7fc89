/**
 * The service does not migrate (it runs as a role that may not): at start it waits until the
 * migration (run as the owner: `migrate-cli`, compose's one-shot, the Kubernetes Job) has
 * applied every migration this code knows, so it never runs on an older schema. Migrations a
 * newer release applied are fine: during a rolling update old replicas keep running.
 */
import type pg from 'pg';
import { MIGRATIONS_DIR, loadMigrations } from './migrate.js';

const UNDEFINED_TABLE = '42P01';

/** Resolves when the schema is current; otherwise throws saying what is missing. */
export async function assertSchemaCurrent(
  db: Pick<pg.Pool, 'query'>,
  migrationsDir: string = MIGRATIONS_DIR,
): Promise<void> {
  const rows = await db
    .query<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM dispatcher_migrations',
    )
    .then((result) => result.rows)
    .catch((error: unknown) => {
      if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
      return [];
    });
  const applied = new Map(rows.map((row) => [row.version, row.checksum]));
  const missing = loadMigrations(migrationsDir).filter(
    (migration) => applied.get(migration.version) !== migration.checksum,
  );
  if (missing.length > 0) {
    const names = missing.map((migration) => `${migration.version}_${migration.name}`);
    throw new Error(`schema not migrated: ${names.join(', ')} not applied (run migrate-cli)`);
  }
}
