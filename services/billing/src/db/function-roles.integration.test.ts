import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RuntimeGrants } from '@gateway/runtime';
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
import {
  EDGE_ADMISSION_GRANTS,
  EDGE_FUNCTIONS,
  WORKER_FUNCTIONS,
  WORKER_LEDGER_GRANTS,
} from './function-role-grants.js';

/*
 * The roles of the services that call billing's money functions directly (ADR 0070), against the
 * real PostgreSQL: granted by the migrator, each may execute its few functions, which run as
 * their owner, and nothing else of billing's database.
 */

const WORKER_ROLE = 'billing_worker_ledger_test';
const EDGE_ROLE = 'billing_edge_admission_test';
let db: TestDatabase;
let owner: pg.Client;
const clients: Record<string, pg.Client> = {};
const migrate = () => migrateDatabase(db.url, { workerRole: WORKER_ROLE, edgeRole: EDGE_ROLE });

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  await Promise.all([createTestRole(WORKER_ROLE), createTestRole(EDGE_ROLE)]);
  await migrate();
  owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  for (const role of [WORKER_ROLE, EDGE_ROLE]) {
    clients[role] = new pg.Client({ connectionString: urlAsRole(db.url, role) });
    await clients[role].connect();
  }
});

afterAll(async () => {
  await Promise.all([owner?.end(), ...Object.values(clients).map((client) => client.end())]);
  await db?.drop();
});

const as = (role: string) => clients[role] as pg.Client;

describe.each<[string, string, RuntimeGrants, readonly string[]]>([
  ['the worker ledger role', WORKER_ROLE, WORKER_LEDGER_GRANTS, WORKER_FUNCTIONS],
  ['the edge admission role', EDGE_ROLE, EDGE_ADMISSION_GRANTS, EDGE_FUNCTIONS],
])('%s', (_name, role, grants, functions) => {
  it('has no privilege on any table or sequence', async () => {
    expect(await rolePrivileges(db.url, role)).toEqual({
      tables: sortedPrivileges(grants.tables),
      sequences: sortedPrivileges(grants.sequences),
    });
    expect(Object.values(grants.tables).flat()).toEqual([]);
  });

  it('may execute its functions and no other, each as its owner', async () => {
    const { rows } = await owner.query<{ name: string; executable: boolean; definer: boolean }>(
      `SELECT p.proname AS name, has_function_privilege($1, p.oid, 'EXECUTE') AS executable,
              p.prosecdef AS definer
         FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prorettype <> 'trigger'::regtype`,
      [role],
    );
    const executable = rows.filter((row) => row.executable);
    expect(executable.map((row) => row.name).sort()).toEqual([...functions].sort());
    for (const row of executable) expect(row.definer).toBe(true);
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
    ['admit any credential', "SELECT * FROM billing_admit_batch_v1('[]')"],
    ['touch a key by writing it', 'UPDATE api_keys SET last_used_at = now()'],
    ['create a table', 'CREATE TABLE mine (id int)'],
  ])('cannot %s', async (_what, statement) => {
    await expect(as(role).query(statement)).rejects.toMatchObject({ code: '42501' });
  });

  it('gets a hand-made grant taken back at the next migration', async () => {
    await owner.query(`GRANT SELECT ON holds TO ${role}`);
    await migrate();
    await expect(as(role).query('SELECT * FROM holds')).rejects.toMatchObject({ code: '42501' });
  });
});

describe('through its functions', () => {
  it('the worker ends a hold although it cannot read the holds table', async () => {
    const { rows } = await as(WORKER_ROLE).query(
      "SELECT outcome FROM usage_void_hold('hold_none', now(), NULL, NULL, NULL)",
    );
    expect(rows).toEqual([{ outcome: 'not_found' }]);
  });

  it('edge admits a batch although it cannot read the keys', async () => {
    const { rows } = await as(EDGE_ROLE).query(
      'SELECT outcome FROM billing_admit_api_keys_v1($1::jsonb)',
      [JSON.stringify([{ key_digest: 'f'.repeat(64), model: 'm', hold_id: 'hold_x' }])],
    );
    expect(rows).toEqual([{ outcome: 'invalid_api_key' }]);
  });
});
