import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  rolePrivileges,
  sortedPrivileges,
  type TestDatabase,
} from '@gateway/testing';
import pg from 'pg';
import { dispatcherDatabaseTemplate, migrateDatabase, TEST_RUNTIME_ROLE } from './migrate.js';
import { DISPATCHER_RUNTIME_GRANTS } from './runtime-grants.js';

/*
 * The dispatcher's runtime role against the real PostgreSQL: it can do what the service does
 * (every other dispatcher test runs as it) and nothing that changes the schema.
 */

let db: TestDatabase;
let runtime: pg.Client;
let owner: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(dispatcherDatabaseTemplate);
  [runtime, owner] = [new pg.Client(db.runtimeUrl), new pg.Client(db.url)];
  await Promise.all([runtime.connect(), owner.connect()]);
});

afterAll(async () => {
  await Promise.all([runtime?.end(), owner?.end()]);
  await db?.drop();
});

describe('dispatcher runtime role', () => {
  it.each([
    ['create a table', 'CREATE TABLE evil (id int)'],
    ['add a column', 'ALTER TABLE webhook_deliveries ADD COLUMN evil int'],
    ['drop a constraint', 'ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey'],
    ['drop a table', 'DROP TABLE webhook_attempts'],
    ['create an index', 'CREATE INDEX evil ON webhook_secrets (account_id)'],
    ['create a function', 'CREATE FUNCTION evil() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$'],
    [
      'create a trigger',
      'CREATE TRIGGER evil BEFORE UPDATE ON webhook_secrets FOR EACH ROW ' +
        'EXECUTE FUNCTION suppress_redundant_updates_trigger()',
    ],
    ['disable the foreign-key triggers', 'ALTER TABLE webhook_attempts DISABLE TRIGGER ALL'],
    ['switch triggers off for the session', 'SET session_replication_role = replica'],
    ['truncate deliveries', 'TRUNCATE webhook_deliveries CASCADE'],
    ['truncate the attempt log', 'TRUNCATE webhook_attempts'],
    ['truncate secrets', 'TRUNCATE webhook_secrets'],
    ['delete deliveries', 'DELETE FROM webhook_deliveries'],
    ['rewrite the attempt log', "UPDATE webhook_attempts SET outcome = 'delivered'"],
    ['delete the attempt log', 'DELETE FROM webhook_attempts'],
    ['rewrite the migration history', 'DELETE FROM dispatcher_migrations'],
    ['forge a migration', "INSERT INTO dispatcher_migrations VALUES (99, 'x', 'x')"],
  ])('cannot %s', async (_what, statement) => {
    await expect(runtime.query(statement)).rejects.toMatchObject({ code: '42501' });
  });

  it('has exactly the listed privileges on every table and sequence of the schema', async () => {
    // A migration that adds a table or sequence must say what the runtime role may do with it.
    expect(await rolePrivileges(db.url, TEST_RUNTIME_ROLE)).toEqual({
      tables: sortedPrivileges(DISPATCHER_RUNTIME_GRANTS.tables),
      sequences: sortedPrivileges(DISPATCHER_RUNTIME_GRANTS.sequences),
    });
  });

  it('re-grants idempotently, restoring a privilege taken away and removing one added', async () => {
    await owner.query(`REVOKE INSERT ON webhook_attempts FROM ${TEST_RUNTIME_ROLE}`);
    await owner.query(`GRANT DELETE, TRUNCATE ON webhook_deliveries TO ${TEST_RUNTIME_ROLE}`);
    await migrateDatabase(db.url, { runtimeRole: TEST_RUNTIME_ROLE });
    await migrateDatabase(db.url, { runtimeRole: TEST_RUNTIME_ROLE });
    expect((await rolePrivileges(db.url, TEST_RUNTIME_ROLE)).tables).toEqual(
      sortedPrivileges(DISPATCHER_RUNTIME_GRANTS.tables),
    );
  });

  it('refuses a runtime role that is missing or a superuser', async () => {
    await expect(migrateDatabase(db.url, { runtimeRole: 'no_such_role' })).rejects.toThrow(
      /no_such_role does not exist/,
    );
    await expect(migrateDatabase(db.url, { runtimeRole: 'postgres' })).rejects.toThrow(
      /superuser or can act as the migration role/,
    );
  });
});
