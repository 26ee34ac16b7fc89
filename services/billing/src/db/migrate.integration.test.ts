import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@gateway/testing';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  MIGRATIONS_DIR,
  loadMigrations,
  migrateDatabase,
  migrationsFingerprint,
} from './migrate.js';

const databases: Array<{ url: string; drop(): Promise<void> }> = [];
let scratch: string;

async function emptyDatabase(): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  return db.url;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** A copy of the real migrations plus `extra` ({ name: sql }), in a directory of its own. */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(path.join(scratch, 'migrations-'));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'billing-migrate-'));
});

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
  rmSync(scratch, { recursive: true, force: true });
});

describe('migrateDatabase', () => {
  it('migrates an empty database, then finds nothing to do', async () => {
    const url = await emptyDatabase();
    const names = loadMigrations().map((migration) => migration.id);
    const first = await migrateDatabase(url);
    expect(first.applied).toEqual(names);
    expect(first.durationMs).toBeLessThan(5_000);
    const second = await migrateDatabase(url);
    expect(second).toMatchObject({ applied: [], alreadyApplied: names, unknown: [] });
    const tables = await query<{ n: number }>(
      url,
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename = 'ledger_entries'",
    );
    expect(tables[0]?.n).toBe(1);
  });

  it('rolls a failing migration back completely and records nothing', async () => {
    const url = await emptyDatabase();
    const dir = migrationsWith({
      '99990101000000_broken': 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n',
    });
    await expect(migrateDatabase(url, { migrationsDir: dir })).rejects.toThrow(
      /99990101000000_broken failed: .*no_such_table/,
    );
    const leftovers = await query(url, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'");
    expect(leftovers).toHaveLength(0);
    const recorded = await query<{ migration_name: string }>(
      url,
      'SELECT migration_name FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(recorded.map((row) => row.migration_name)).toEqual(
      loadMigrations().map((migration) => migration.id),
    );
  });

  it('refuses a migration that was modified after it was applied', async () => {
    const url = await emptyDatabase();
    const dir = migrationsWith({ '99990101000000_extra': 'CREATE TABLE extra (id int);\n' });
    await migrateDatabase(url, { migrationsDir: dir });
    writeFileSync(
      path.join(dir, '99990101000000_extra', 'migration.sql'),
      'CREATE TABLE extra (id bigint);\n',
    );
    await expect(migrateDatabase(url, { migrationsDir: dir })).rejects.toThrow(
      /99990101000000_extra was modified/,
    );
    // The code without that migration still accepts the database (newer than the code).
    const result = await migrateDatabase(url);
    expect(result.unknown).toEqual(['99990101000000_extra']);
  });

  it('gives pending holds their catalog prices when hold prices are introduced', async () => {
    const url = await emptyDatabase();
    // The database as the first release left it: only the init migration.
    const initOnly = mkdtempSync(path.join(scratch, 'init-only-'));
    const [init] = loadMigrations().map((migration) => migration.id);
    cpSync(path.join(MIGRATIONS_DIR, init!), path.join(initOnly, init!), { recursive: true });
    // The function sources describe the latest schema: not applied to a partial history.
    await migrateDatabase(url, { migrationsDir: initOnly, functionsDir: null });
    await query(
      url,
      `INSERT INTO models (id, kind, provider, upstream_model, input_price_micro_dzd_per_m,
                           output_price_micro_dzd_per_m, max_output_tokens)
       VALUES ('acme/m', 'chat', 'node', 'm', 2000000, 6000000, 64);
       INSERT INTO holds (id, account_id, amount_micro_dzd, status, model, expires_at)
       VALUES ('hold_pending', 'usr_a', 10, 'pending', 'acme/m', now()),
              ('hold_voided', 'usr_a', 10, 'voided', 'acme/m', now()),
              ('hold_orphan', 'usr_a', 10, 'pending', 'acme/gone', now());`,
    );
    await migrateDatabase(url);
    const rows = await query<{ id: string; input: string | null; output: string | null }>(
      url,
      `SELECT id, input_price_micro_dzd_per_m AS input, output_price_micro_dzd_per_m AS output
         FROM holds ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 'hold_orphan', input: null, output: null },
      { id: 'hold_pending', input: '2000000', output: '6000000' },
      { id: 'hold_voided', input: null, output: null },
    ]);
  });

  it('carries balances forward for months closed before carried balances existed', async () => {
    const url = await emptyDatabase();
    // The database as closed periods first shipped: every migration up to them.
    const before = mkdtempSync(path.join(scratch, 'closed-periods-'));
    for (const id of loadMigrations().map((migration) => migration.id)) {
      if (id > '20270120090000_closed_periods') break;
      cpSync(path.join(MIGRATIONS_DIR, id), path.join(before, id), { recursive: true });
    }
    await migrateDatabase(url, { migrationsDir: before, functionsDir: null });
    await query(
      url,
      `INSERT INTO accounts (id, name) VALUES ('usr_a', 'A');
       INSERT INTO ledger_transactions (id, kind, account_id, created_at) VALUES
         ('txn_aug', 'credit', 'usr_a', '2026-08-10T10:00:00Z'),
         ('txn_oct', 'credit', 'usr_a', '2026-10-10T10:00:00Z');
       INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                   created_at) VALUES
         ('txn_aug', 'customer:usr_a', 'usr_a', 5000000, '2026-08-10T10:00:00Z'),
         ('txn_aug', 'system:funding', NULL, -5000000, '2026-08-10T10:00:00Z'),
         ('txn_oct', 'customer:usr_a', 'usr_a', 7000000, '2026-10-10T10:00:00Z'),
         ('txn_oct', 'system:funding', NULL, -7000000, '2026-10-10T10:00:00Z');
       INSERT INTO ledger_periods (period, time_zone, starts_at, ends_at, entries_count,
                                   entries_digest, report, closed_at, closed_by)
       VALUES ('2026-09', 'UTC', '2026-09-01T00:00:00Z', '2026-10-01T00:00:00Z', 0,
               '${'0'.repeat(64)}', '{}', '2026-10-02T00:00:00Z', 'test');`,
    );
    await migrateDatabase(url);
    const rows = await query<{ ledger_account: string; closing: string }>(
      url,
      `SELECT ledger_account, closing_micro_dzd::text AS closing FROM ledger_period_balances
        WHERE period = '2026-09' ORDER BY ledger_account`,
    );
    // August's credit, not October's: the balances at September's end.
    expect(rows).toEqual([
      { ledger_account: 'customer:usr_a', closing: '5000000' },
      { ledger_account: 'system:funding', closing: '-5000000' },
    ]);
  });

  it('fingerprints the migrations', () => {
    const dir = migrationsWith({ '99990101000000_extra': 'SELECT 1;\n' });
    expect(migrationsFingerprint()).toMatch(/^[0-9a-f]{12}$/);
    expect(migrationsFingerprint(dir)).not.toBe(migrationsFingerprint());
  });
});
