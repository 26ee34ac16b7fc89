/**
 * Billing's readiness includes its schema: the migration runs apart (migrate-cli, compose's
 * one-shot, the Kubernetes Job, as the schema's owner), and a pod started before it finished —
 * the first install, or a rollout racing the release's Job — must not take traffic. Ready once
 * every migration this image carries is recorded in `_prisma_migrations` with the same checksum;
 * migrations a newer release applied are fine (old replicas keep running during a rollout).
 */
import type pg from 'pg';
import type { ReadinessCheck } from '@gateway/runtime';
import { MIGRATIONS_DIR, loadMigrations } from './migrate.js';

const UNDEFINED_TABLE = '42P01';

interface AppliedRow {
  migration_name: string;
  checksum: string;
}

/** Resolves when the schema is current; otherwise throws naming what is missing. */
export async function assertBillingSchemaCurrent(
  db: Pick<pg.Pool, 'query'>,
  migrationsDir: string = MIGRATIONS_DIR,
): Promise<void> {
  const rows = await db
    .query<AppliedRow>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" ' +
        'WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    )
    .then((result) => result.rows)
    .catch((error: unknown) => {
      if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
      return [];
    });
  const applied = new Map(rows.map((row) => [row.migration_name, row.checksum]));
  const missing = loadMigrations(migrationsDir).filter(
    (migration) => applied.get(migration.id) !== migration.checksum,
  );
  if (missing.length > 0) {
    const names = missing.map((migration) => migration.id).join(', ');
    throw new Error(`schema not migrated: ${names} not applied (run migrate-cli)`);
  }
}

/**
 * The readiness check `schema`. Once current, the schema cannot fall behind this code again,
 * so later probes skip the query.
 */
export function billingSchemaReadiness(
  db: Pick<pg.Pool, 'query'>,
  migrationsDir: string = MIGRATIONS_DIR,
): ReadinessCheck {
  let current = false;
  return {
    name: 'schema',
    check: async () => {
      if (current) return;
      await assertBillingSchemaCurrent(db, migrationsDir);
      current = true;
    },
  };
}
