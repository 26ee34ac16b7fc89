import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from './test-env.js';

describe('test infrastructure', () => {
  it('gives each caller an isolated database cloned from a migrated template', async () => {
    const template = {
      name: `tpl_infra_${process.pid}`,
      migrate: async (url: string) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query('CREATE TABLE marker (id int PRIMARY KEY)');
        await client.end();
      },
    };
    const first = await createTestDatabase(template);
    const second = await createTestDatabase(template);
    expect(first.url).not.toBe(second.url);
    const a = new pg.Client({ connectionString: first.url });
    const b = new pg.Client({ connectionString: second.url });
    await Promise.all([a.connect(), b.connect()]);
    await a.query('INSERT INTO marker VALUES (1)');
    const seenByB = await b.query('SELECT count(*)::int AS n FROM marker');
    expect(seenByB.rows[0].n).toBe(0);
    await Promise.all([a.end(), b.end()]);
    await Promise.all([first.drop(), second.drop()]);
  });
});
