import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startPostgresCluster } from './postgres.js';

const dir = mkdtempSync(path.join(tmpdir(), 'postgres-options-'));
chmodSync(dir, 0o755); // as root, the cluster's unprivileged owner must traverse it
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startPostgresCluster', () => {
  it('loads pg_stat_statements only when asked (the bench counts statements with it)', async () => {
    const cluster = await startPostgresCluster({
      baseDir: path.join(dir, 'stats'),
      statementStatistics: true,
    });
    const client = new pg.Client({ connectionString: cluster.adminUrl });
    try {
      await client.connect();
      await client.query('CREATE EXTENSION pg_stat_statements');
      await client.query('SELECT 42 AS answer');
      const counted = await client.query(
        "SELECT sum(calls)::int AS calls FROM pg_stat_statements WHERE query LIKE 'SELECT $1 AS answer%'",
      );
      expect(counted.rows[0].calls).toBe(1);
    } finally {
      await client.end();
      await cluster.stop();
    }
  });
});
