import pg from 'pg';
import type { ReadinessCheck } from './ops-routes.js';

/** A bounded pool: connections, connect wait and statement time all have limits. */
export function createPostgresPool(url: string, maxConnections: number): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 30_000,
  });
}

export const postgresReadiness = (pool: pg.Pool): ReadinessCheck => ({
  name: 'postgres',
  check: async () => {
    await pool.query('SELECT 1');
  },
});
