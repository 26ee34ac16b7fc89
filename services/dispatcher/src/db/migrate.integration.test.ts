import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from '@gateway/testing';
import { MIGRATIONS_DIR, loadMigrations, migrateDatabase } from './migrate.js';

describe('migrations', () => {
  let db: { url: string; drop(): Promise<void> };
  let dir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'dispatcher-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  });

  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('concurrent migrators apply each migration once', async () => {
    const results = await Promise.all([
      migrateDatabase(db.url, { migrationsDir: dir }),
      migrateDatabase(db.url, { migrationsDir: dir }),
    ]);
    const count = loadMigrations(dir).length;
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, count]);
    expect((await migrateDatabase(db.url, { migrationsDir: dir })).alreadyApplied).toBe(count);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const tables = await client.query(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    await client.end();
    expect(tables.rows.map((r) => r.tablename)).toEqual([
      'dispatcher_migrations',
      'webhook_attempts',
      'webhook_deliveries',
      'webhook_secret_rotations',
      'webhook_secrets',
    ]);
  });

  it('refuses an applied migration whose file changed', async () => {
    writeFileSync(path.join(dir, '001_init.sql'), '-- edited\nSELECT 1;');
    await expect(migrateDatabase(db.url, { migrationsDir: dir })).rejects.toThrow(
      /modified after it was applied/,
    );
  });
});
