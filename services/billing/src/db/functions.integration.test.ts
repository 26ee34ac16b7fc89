import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@gateway/testing';
import pg from 'pg';
import { billingDatabaseTemplate } from './client.js';

/*
 * `prisma/functions/<name>.sql` is the one place to read a SQL function: its live definition.
 * The migrations create it; this test proves the migrated database's definition of each function
 * equals its file, and that the files and the database's functions are the same set.
 */

const FUNCTIONS_DIR = fileURLToPath(new URL('../../prisma/functions/', import.meta.url));
// A schema made and rolled back per comparison: the file's CREATE lands there, not in public.
const SCRATCH_SCHEMA = 'function_source_check';

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  client = new pg.Client({ connectionString: db.url }); // the owner: may create a schema
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

const sourceFiles = (): string[] =>
  readdirSync(FUNCTIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort();

/** `CREATE OR REPLACE FUNCTION schema.name(...)`: each definition in a schema, by name. */
async function definitionsIn(schema: string): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1
        AND NOT EXISTS (SELECT 1 FROM pg_depend d
                         WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                           AND d.deptype = 'e')`,
    [schema],
  );
  const byName = new Map<string, string>();
  for (const row of rows) {
    // One definition per name: an overload would make "the function's file" ambiguous.
    expect(byName.has(row.name)).toBe(false);
    byName.set(row.name, row.definition);
  }
  return byName;
}

// Whitespace is not meaning: a file may be re-indented without a migration. Lines, so that a
// difference shows as a line diff.
const normalised = (definition: string, schema: string): string[] =>
  definition
    .replaceAll(`${schema}.`, 'public.')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line !== '');

/** The function the file creates, as PostgreSQL prints it (created in a rolled-back schema). */
async function fileDefinition(file: string): Promise<Map<string, string>> {
  await client.query('BEGIN');
  try {
    await client.query(`CREATE SCHEMA ${SCRATCH_SCHEMA}`);
    await client.query(`SET LOCAL search_path = ${SCRATCH_SCHEMA}, public`);
    await client.query(readFileSync(`${FUNCTIONS_DIR}${file}`, 'utf8'));
    return await definitionsIn(SCRATCH_SCHEMA);
  } finally {
    await client.query('ROLLBACK');
  }
}

describe('SQL function sources (prisma/functions)', () => {
  it('has one file per function of the migrated database, and no other', async () => {
    const live = [...(await definitionsIn('public')).keys()].sort();
    expect(sourceFiles()).toEqual(live.map((name) => `${name}.sql`));
  });

  it.each(sourceFiles())('%s is the database definition', async (file) => {
    const created = await fileDefinition(file);
    const name = file.replace(/\.sql$/, '');
    // The file creates exactly its own function, nothing else.
    expect([...created.keys()]).toEqual([name]);
    const live = (await definitionsIn('public')).get(name);
    expect(live).toBeDefined();
    expect(normalised(created.get(name) ?? '', SCRATCH_SCHEMA)).toEqual(
      normalised(live ?? '', 'public'),
    );
  });
});
