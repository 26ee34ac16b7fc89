import type pg from 'pg';

/**
 * Runs `work` in a transaction on `client`: committed when it resolves, rolled back (and its
 * error rethrown) when it throws. For the migrator's one connection; the services use their
 * pools' own transaction helpers.
 */
export async function inTransaction<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Runs `work` on one connection of `pool` in a transaction (`begin` may name its isolation, e.g.
 * `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`): committed when it resolves, rolled back and
 * rethrown when it throws, the connection released either way. The services' repositories.
 */
export async function inPoolTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
