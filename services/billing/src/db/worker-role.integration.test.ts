import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  createTestRole,
  rolePrivileges,
  sortedPrivileges,
  urlAsRole,
  type TestDatabase,
} from '@gateway/testing';
import pg from 'pg';
import { billingDatabaseTemplate } from './client.js';
import { migrateDatabase } from './migrate.js';
import { WORKER_FUNCTIONS, WORKER_LEDGER_GRANTS } from './worker-grants.js';

/*
 * The inference worker's ledger role (ADR 0070) against the real PostgreSQL: granted by the
 * migrator, it may execute the two functions that end a hold, which run as their owner, and
 * nothing else of billing's database.
 */

const WORKER_ROLE = 'billing_worker_ledger_test';
let db: TestDatabase;
let owner: pg.Client;
let worker: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  await createTestRole(WORKER_ROLE);
  await migrateDatabase(db.url, { workerRole: WORKER_ROLE });
  owner = new pg.Client({ connectionString: db.url });
  worker = new pg.Client({ connectionString: urlAsRole(db.url, WORKER_ROLE) });
  await Promise.all([owner.connect(), worker.connect()]);
});

afterAll(async () => {
  await Promise.all([owner?.end(), worker?.end()]);
  await db?.drop();
});

describe('the worker ledger role', () => {
  it('has no privilege on any table or sequence', async () => {
    expect(await rolePrivileges(db.url, WORKER_ROLE)).toEqual({
      tables: sortedPrivileges(WORKER_LEDGER_GRANTS.tables),
      sequences: sortedPrivileges(WORKER_LEDGER_GRANTS.sequences),
    });
    expect(Object.values(WORKER_LEDGER_GRANTS.tables).flat()).toEqual([]);
  });

  it('may execute the two hold-ending functions and no other, both as their owner', async () => {
    const { rows } = await owner.query<{ name: string; executable: boolean; definer: boolean }>(
      `SELECT p.proname AS name, has_function_privilege($1, p.oid, 'EXECUTE') AS executable,
              p.prosecdef AS definer
         FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prorettype <> 'trigger'::regtype`,
      [WORKER_ROLE],
    );
    const executable = rows.filter((row) => row.executable);
    expect(executable.map((row) => row.name).sort()).toEqual([...WORKER_FUNCTIONS].sort());
    for (const row of executable) expect(row.definer).toBe(true);
  });

  it('ends a hold through the function although it cannot read the holds table', async () => {
    const { rows } = await worker.query(
      "SELECT outcome FROM usage_void_hold('hold_none', now(), NULL, NULL, NULL)",
    );
    expect(rows).toEqual([{ outcome: 'not_found' }]);
  });

  it.each([
    ['read holds', 'SELECT * FROM holds'],
    ['read key digests', 'SELECT key_digest FROM api_keys'],
    ['read the ledger', 'SELECT * FROM ledger_entries'],
    ['read stored responses', 'SELECT * FROM stored_responses'],
    ['call the ledger functions under the wrappers', "SELECT * FROM ledger_void_hold('h', now())"],
    [
      'settle without a usage record',
      "SELECT * FROM ledger_settle_holds('{h}', '{1}', '{1}', '{t}', now())",
    ],
    ['refund a hold', "SELECT * FROM ledger_refund_hold('h', 't', now())"],
    [
      'write the ledger',
      "INSERT INTO ledger_transactions (id, kind, account_id) VALUES ('x', 'credit', 'usr_x')",
    ],
    ['create a table', 'CREATE TABLE mine (id int)'],
  ])('cannot %s', async (_what, statement) => {
    await expect(worker.query(statement)).rejects.toMatchObject({ code: '42501' });
  });

  it('gets a hand-made grant taken back at the next migration', async () => {
    await owner.query(`GRANT SELECT ON holds TO ${WORKER_ROLE}`);
    await migrateDatabase(db.url, { workerRole: WORKER_ROLE });
    await expect(worker.query('SELECT * FROM holds')).rejects.toMatchObject({ code: '42501' });
  });
});
