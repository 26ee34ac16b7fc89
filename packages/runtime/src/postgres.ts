import pg from 'pg';
import type { ReadinessCheck } from './ops-routes.js';

/**
 * A bounded pool: connections, connect wait and statement time all have limits. `timeoutMs`
 * bounds each statement on the server (statement_timeout) and, when given, the wait for its
 * answer in the client too (query_timeout), which also ends a wait the network cut off.
 */
export function createPostgresPool(
  url: string,
  maxConnections: number,
  {
    timeoutMs = 30_000,
    clientTimeout = false,
  }: { timeoutMs?: number; clientTimeout?: boolean } = {},
): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: timeoutMs,
    ...(clientTimeout ? { query_timeout: timeoutMs } : {}),
  });
}

export const postgresReadiness = (pool: pg.Pool): ReadinessCheck => ({
  name: 'postgres',
  check: async () => {
    await pool.query('SELECT 1');
  },
});
