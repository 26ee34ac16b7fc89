import type pg from 'pg';

/** Runs `work` in one READ COMMITTED transaction on a pooled connection. */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
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

/** Milliseconds as a SQL interval parameter: `$n * interval '1 millisecond'`. */
export const MS = "* interval '1 millisecond'";
