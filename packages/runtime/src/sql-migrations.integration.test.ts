import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@gateway/testing';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadRepeatableSources } from './repeatable-sources.js';
import {
  loadMigrationDirectories,
  loadNumberedMigrations,
  migrationsFingerprint,
  type NumberedMigration,
  type SqlMigration,
} from './sql-migration-files.js';
import {
  prismaBookkeeping,
  runSqlMigrations,
  versionBookkeeping,
  type SqlMigrationTarget,
} from './sql-migrations.js';

const databases: Array<{ drop(): Promise<void> }> = [];
let scratch: string;

const prismaTarget: SqlMigrationTarget<SqlMigration> = {
  applicationName: 'sql-migrations-test',
  lockKey: 1_234_567,
  bookkeeping: prismaBookkeeping,
  grants: { tables: {}, sequences: {} },
};
const versionTarget: SqlMigrationTarget<NumberedMigration> = {
  ...prismaTarget,
  bookkeeping: versionBookkeeping('test_migrations'),
};

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

/** A Prisma-layout directory: `{ name: sql }` → `<name>/migration.sql`. */
function directories(migrations: Record<string, string>): string {
  const dir = mkdtempSync(path.join(scratch, 'dirs-'));
  for (const [name, sql] of Object.entries(migrations)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

/** A numbered-layout directory: `{ file: sql }`. */
function files(migrations: Record<string, string>): string {
  const dir = mkdtempSync(path.join(scratch, 'files-'));
  for (const [file, sql] of Object.entries(migrations)) writeFileSync(path.join(dir, file), sql);
  return dir;
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sql-migrations-'));
});

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
  rmSync(scratch, { recursive: true, force: true });
});

describe('loading migrations', () => {
  it('orders Prisma directories by name and checksums their bytes', () => {
    const dir = directories({ '002_b': 'SELECT 2;\n', '001_a': 'SELECT 1;\n' });
    const migrations = loadMigrationDirectories(dir);
    expect(migrations.map((migration) => migration.id)).toEqual(['001_a', '002_b']);
    // SHA-256 hex of the file's bytes, as Prisma records it: `printf 'SELECT 1;\\n' | sha256sum`.
    expect(migrations[0]!.checksum).toBe(
      'b4e0497804e46e0a0b0b8c31975b062152d551bac49c3c2e80932567b4085dcd',
    );
  });

  it('refuses a Prisma directory without migration.sql', () => {
    const dir = directories({});
    mkdirSync(path.join(dir, '001_empty'));
    expect(() => loadMigrationDirectories(dir)).toThrow(/001_empty has no migration.sql/);
  });

  it('numbers NNN_name.sql files and refuses gaps and other names', () => {
    const ok = files({ '001_init.sql': 'SELECT 1;', '002_more.sql': 'SELECT 2;' });
    expect(loadNumberedMigrations(ok).map(({ id, version }) => [id, version])).toEqual([
      ['1_init', 1],
      ['2_more', 2],
    ]);
    const gap = files({ '001_init.sql': 'SELECT 1;', '003_more.sql': 'SELECT 3;' });
    expect(() => loadNumberedMigrations(gap)).toThrow(/versions must be 1, 2, 3/);
    const badName = files({ '1_init.sql': 'SELECT 1;' });
    expect(() => loadNumberedMigrations(badName)).toThrow(/not named NNN_name.sql/);
  });

  it('rejects migrations that manage their own transaction, in either layout', () => {
    const sql = 'BEGIN;\nCREATE TABLE t (id int);\nCOMMIT;\n';
    expect(() => loadMigrationDirectories(directories({ '001_tx': sql }))).toThrow(
      /001_tx contains BEGIN\/COMMIT/,
    );
    expect(() => loadNumberedMigrations(files({ '001_tx.sql': sql }))).toThrow(
      /1_tx contains BEGIN\/COMMIT/,
    );
  });

  it('fingerprints ids and checksums', () => {
    const one = loadMigrationDirectories(directories({ '001_a': 'SELECT 1;\n' }));
    const other = loadMigrationDirectories(directories({ '001_a': 'SELECT 2;\n' }));
    expect(migrationsFingerprint(one)).toMatch(/^[0-9a-f]{12}$/);
    expect(migrationsFingerprint(one)).not.toBe(migrationsFingerprint(other));
  });
});

describe('runSqlMigrations', () => {
  it('applies pending migrations once, then finds nothing to do (Prisma bookkeeping)', async () => {
    const url = await emptyDatabase();
    const dir = directories({ '001_a': 'CREATE TABLE a (id int);', '002_b': 'CREATE TABLE b ();' });
    const applied: string[] = [];
    const first = await runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget, {
      onApplied: (migration) => applied.push(migration),
    });
    expect(first).toMatchObject({ applied: ['001_a', '002_b'], alreadyApplied: [], unknown: [] });
    expect(applied).toEqual(['001_a', '002_b']);
    const second = await runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget);
    expect(second).toMatchObject({ applied: [], alreadyApplied: ['001_a', '002_b'] });
    const rows = await query<{ migration_name: string; steps: number; finished: boolean }>(
      url,
      `SELECT migration_name, applied_steps_count AS steps, finished_at IS NOT NULL AS finished
         FROM _prisma_migrations ORDER BY migration_name`,
    );
    expect(rows).toEqual([
      { migration_name: '001_a', steps: 1, finished: true },
      { migration_name: '002_b', steps: 1, finished: true },
    ]);
  });

  it('serialises concurrent migrators (version bookkeeping)', async () => {
    const url = await emptyDatabase();
    const migrations = loadNumberedMigrations(
      files({ '001_a.sql': 'CREATE TABLE a (id int);', '002_b.sql': 'CREATE TABLE b ();' }),
    );
    const results = await Promise.all([
      runSqlMigrations(url, migrations, versionTarget),
      runSqlMigrations(url, migrations, versionTarget),
    ]);
    expect(results.map((result) => result.applied.length).sort()).toEqual([0, 2]);
    const rows = await query<{ version: number; name: string }>(
      url,
      'SELECT version, name FROM test_migrations ORDER BY version',
    );
    expect(rows).toEqual([
      { version: 1, name: 'a' },
      { version: 2, name: 'b' },
    ]);
  });

  it.each([
    ['Prisma', prismaTarget, '_prisma_migrations'],
    ['version', versionTarget, 'test_migrations'],
  ] as const)(
    'rolls a failing migration back completely and records nothing (%s bookkeeping)',
    async (_, target, table) => {
      const url = await emptyDatabase();
      const migrations = loadNumberedMigrations(
        files({
          '001_ok.sql': 'CREATE TABLE ok (id int);',
          '002_broken.sql': 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n',
        }),
      );
      await expect(
        runSqlMigrations(url, migrations, target as SqlMigrationTarget<NumberedMigration>),
      ).rejects.toThrow(/migration 2_broken failed: .*no_such_table/);
      expect(await query(url, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'")).toEqual([]);
      expect(await query(url, `SELECT count(*)::int AS n FROM ${table}`)).toEqual([{ n: 1 }]);
    },
  );

  it('refuses a modified migration and reports migrations it does not know', async () => {
    const url = await emptyDatabase();
    const dir = directories({ '001_a': 'CREATE TABLE a (id int);', '002_b': 'SELECT 1;' });
    await runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget);
    writeFileSync(path.join(dir, '002_b', 'migration.sql'), 'SELECT 2;');
    await expect(
      runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget),
    ).rejects.toThrow(/migration 002_b was modified after it was applied \(checksum [0-9a-f]+/);
    // Code without 002_b (older than the database) still accepts it.
    rmSync(path.join(dir, '002_b'), { recursive: true });
    const result = await runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget);
    expect(result).toMatchObject({ applied: [], alreadyApplied: ['001_a'], unknown: ['002_b'] });
  });

  it('refuses a database where Prisma Migrate recorded a failed migration', async () => {
    const url = await emptyDatabase();
    const dir = directories({ '001_a': 'CREATE TABLE a (id int);' });
    await runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget);
    await query(
      url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ('x', 'c', '000_failed')`,
    );
    await expect(
      runSqlMigrations(url, loadMigrationDirectories(dir), prismaTarget),
    ).rejects.toThrow(/000_failed failed earlier/);
  });

  it('grants the runtime role after migrating, and fails for a role that does not exist', async () => {
    const url = await emptyDatabase();
    const migrations = loadNumberedMigrations(files({ '001_a.sql': 'CREATE TABLE a (id int);' }));
    await expect(
      runSqlMigrations(url, migrations, versionTarget, { runtimeRole: 'no_such_role_here' }),
    ).rejects.toThrow(/no_such_role_here/);
    // The migration itself committed before the grants ran.
    expect(await query(url, 'SELECT version FROM test_migrations')).toEqual([{ version: 1 }]);
  });
});

describe('repeatable sources', () => {
  const fn = (body: number) =>
    `CREATE OR REPLACE FUNCTION answer() RETURNS int LANGUAGE sql AS $$ SELECT ${body} $$;\n`;
  const answer = async (url: string) =>
    (await query<{ answer: number }>(url, 'SELECT answer()'))[0]?.answer;

  it('applies a source after the migrations, again only once it changed, and forgets a removed one', async () => {
    const url = await emptyDatabase();
    const migrations = loadMigrationDirectories(directories({ '001_a': 'CREATE TABLE a ();' }));
    const dir = files({ 'answer.sql': fn(41), 'caller.sql': callerOfLater });
    const target = () => ({
      ...prismaTarget,
      repeatable: { table: 'test_sources', sources: loadRepeatableSources(dir) },
    });
    const first = await runSqlMigrations(url, migrations, target());
    expect(first.repeated).toEqual(['answer', 'caller']);
    expect(await answer(url)).toBe(41);
    // A body may call a function of a later file (checked per file by the services' tests).
    expect((await query<{ v: number }>(url, 'SELECT caller() AS v'))[0]?.v).toBe(1);
    expect((await runSqlMigrations(url, migrations, target())).repeated).toEqual([]);
    writeFileSync(path.join(dir, 'answer.sql'), fn(42));
    rmSync(path.join(dir, 'caller.sql'));
    expect((await runSqlMigrations(url, migrations, target())).repeated).toEqual(['answer']);
    expect(await answer(url)).toBe(42);
    expect(await query(url, 'SELECT name FROM test_sources')).toEqual([{ name: 'answer' }]);
  });

  it('applies every changed source or none', async () => {
    const url = await emptyDatabase();
    const dir = files({ 'answer.sql': fn(1), 'broken.sql': 'CREATE FUNCTION broken( AS;' });
    const target = {
      ...prismaTarget,
      repeatable: { table: 'test_sources', sources: loadRepeatableSources(dir) },
    };
    await expect(runSqlMigrations(url, [], target)).rejects.toThrow(
      /repeatable source broken failed/,
    );
    expect(await query(url, "SELECT to_regproc('answer') IS NULL AS missing")).toEqual([
      { missing: true },
    ]);
    expect(await query(url, 'SELECT count(*)::int AS n FROM test_sources')).toEqual([{ n: 0 }]);
  });
});

/** Calls `zz_later()`, which a file sorting after it defines. */
const callerOfLater =
  'CREATE OR REPLACE FUNCTION caller() RETURNS int LANGUAGE sql AS $$ SELECT zz_later() $$;\n' +
  'CREATE OR REPLACE FUNCTION zz_later() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n';
