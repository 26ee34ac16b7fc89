import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@gateway/testing';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { billingDatabaseTemplate } from './client.js';
import { MIGRATIONS_DIR } from './migrate.js';
import { assertBillingSchemaCurrent, billingSchemaReadiness } from './schema-check.js';

const databases: TestDatabase[] = [];
const pools: pg.Pool[] = [];
let scratch: string;

function poolOf(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pools.push(pool);
  return pool;
}

async function database(migrated: boolean): Promise<TestDatabase> {
  const db = await createTestDatabase(migrated ? billingDatabaseTemplate : undefined);
  databases.push(db);
  return db;
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'billing-schema-check-'));
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await Promise.all(databases.map((db) => db.drop()));
  rmSync(scratch, { recursive: true, force: true });
});

describe("billing's schema readiness", () => {
  it('refuses a database that was never migrated, naming the migrations', async () => {
    const db = await database(false);
    await expect(assertBillingSchemaCurrent(poolOf(db.url))).rejects.toThrow(
      /^schema not migrated: \d+_init, .* not applied \(run migrate-cli\)$/,
    );
  });

  it('accepts a migrated database, read as the runtime role', async () => {
    const db = await database(true);
    await expect(assertBillingSchemaCurrent(poolOf(db.runtimeUrl))).resolves.toBeUndefined();
  });

  it('refuses a database behind the code: a migration this image carries is not applied', async () => {
    const db = await database(true);
    const newer = path.join(scratch, 'newer');
    cpSync(MIGRATIONS_DIR, newer, { recursive: true });
    mkdirSync(path.join(newer, '99990101000000_next'));
    writeFileSync(path.join(newer, '99990101000000_next', 'migration.sql'), 'SELECT 1;\n');
    await expect(assertBillingSchemaCurrent(poolOf(db.runtimeUrl), newer)).rejects.toThrow(
      'schema not migrated: 99990101000000_next not applied',
    );
  });

  it('accepts a database ahead of the code (a newer release migrated during its rollout)', async () => {
    const db = await database(true);
    const older = path.join(scratch, 'older');
    mkdirSync(older);
    cpSync(
      path.join(MIGRATIONS_DIR, '20261121005140_init'),
      path.join(older, '20261121005140_init'),
      {
        recursive: true,
      },
    );
    await expect(assertBillingSchemaCurrent(poolOf(db.runtimeUrl), older)).resolves.toBeUndefined();
  });

  it('stays ready once the schema was current, without asking again', async () => {
    const db = await database(true);
    const pool = poolOf(db.runtimeUrl);
    const readiness = billingSchemaReadiness(pool);
    await readiness.check();
    await pool.end();
    pools.splice(pools.indexOf(pool), 1);
    await expect(readiness.check()).resolves.toBeUndefined();
  });
});
