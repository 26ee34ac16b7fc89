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
