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
import { billingDatabaseTemplate, TEST_RUNTIME_ROLE } from './client.js';
import { migrateDatabase } from './migrate.js';
import { EDGE_FUNCTIONS, WORKER_FUNCTIONS } from './function-role-grants.js';
import {
  RUNTIME_FUNCTION_PRIVILEGES,
  RUNTIME_SEQUENCE_PRIVILEGES,
  RUNTIME_TABLE_PRIVILEGES,
} from './runtime-grants.js';

/*
 * Billing's runtime role against the real PostgreSQL: it can do what the service does (the
 * other billing tests run as it) and nothing that could rewrite the ledger or the schema.
 */

let db: TestDatabase;
const clients: pg.Client[] = [];

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
  await db.drop();
});

/** A credit posted as `client`: one journal transaction, its two entries; the entry ids. */
async function postCredit(client: pg.Client): Promise<string[]> {
  const suffix = Math.random().toString(36).slice(2);
  const [accountId, transactionId] = [`usr_${suffix}`, `txn_${suffix}`];
  await client.query("INSERT INTO accounts (id, name) VALUES ($1, 'a')", [accountId]);
  await client.query(
    "INSERT INTO ledger_transactions (id, kind, account_id) VALUES ($1, 'credit', $2)",
    [transactionId, accountId],
  );
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd)
     VALUES ($1, 'system:funding', NULL, -5), ($1, $2, $3, 5) RETURNING id`,
    [transactionId, `customer:${accountId}`, accountId],
  );
  return rows.map((row) => row.id);
}

describe('billing runtime role', () => {
  it.each([
    ['disable the ledger triggers', 'ALTER TABLE ledger_entries DISABLE TRIGGER ALL'],
    [
      'disable one trigger',
      'ALTER TABLE ledger_transactions DISABLE TRIGGER ledger_transactions_append_only',
    ],
    ['drop a trigger', 'DROP TRIGGER ledger_entries_append_only ON ledger_entries'],
    ['drop the balance check', 'DROP FUNCTION ledger_check_balanced() CASCADE'],
    [
      'create a trigger',
      'CREATE TRIGGER t BEFORE INSERT ON holds FOR EACH ROW EXECUTE FUNCTION ledger_reject_change()',
    ],
    ['update an entry', 'UPDATE ledger_entries SET amount_micro_dzd = 0'],
    ['delete entries', 'DELETE FROM ledger_entries'],
    ['update a journal transaction', "UPDATE ledger_transactions SET reference = 'x'"],
    ['delete journal transactions', 'DELETE FROM ledger_transactions'],
    ['truncate the ledger', 'TRUNCATE ledger_entries, ledger_transactions'],
    ['delete holds', 'DELETE FROM holds'],
    ['delete accounts', 'DELETE FROM accounts'],
    ['create a table', 'CREATE TABLE evil (id int)'],
    [
      'alter a table',
      'ALTER TABLE account_balances DROP CONSTRAINT account_balances_available_nonnegative',
    ],
    ['drop a table', 'DROP TABLE rate_limit_windows'],
    ['rewrite the migration history', 'DELETE FROM _prisma_migrations'],
    ['switch triggers off for the session', 'SET session_replication_role = replica'],
    ['reset the entry ids', 'ALTER SEQUENCE ledger_entries_id_seq RESTART'],
  ])('cannot %s', async (_what, statement) => {
    const runtime = await connect(db.runtimeUrl);
    await expect(runtime.query(statement)).rejects.toMatchObject({ code: '42501' });
  });

  it('can insert and read the ledger, but not change a posted entry', async () => {
    const runtime = await connect(db.runtimeUrl);
    const [entryId] = await postCredit(runtime);
    const { rows } = await runtime.query(
      'SELECT amount_micro_dzd FROM ledger_entries WHERE id = $1',
      [entryId],
    );
    expect(rows).toEqual([{ amount_micro_dzd: '-5' }]);
    await expect(
      runtime.query('UPDATE ledger_entries SET amount_micro_dzd = 0 WHERE id = $1', [entryId]),
    ).rejects.toThrow(/permission denied/);
  });

  it('has exactly the listed privileges on every table and sequence of the schema', async () => {
    // A migration that adds a table or sequence must say what the runtime role may do with it.
    expect(await rolePrivileges(db.url, TEST_RUNTIME_ROLE)).toEqual({
      tables: sortedPrivileges(RUNTIME_TABLE_PRIVILEGES),
      sequences: sortedPrivileges(RUNTIME_SEQUENCE_PRIVILEGES),
    });
  });

  it('may execute exactly the listed ledger functions, as itself but for those of other roles', async () => {
    const owner = await connect(db.url);
    const { rows } = await owner.query<{
      name: string;
      invoker: boolean;
      runtime: boolean;
      public: boolean;
    }>(
      `SELECT p.proname AS name, NOT p.prosecdef AS invoker,
              has_function_privilege($1, p.oid, 'EXECUTE') AS runtime,
              COALESCE(bool_or(a.grantee = 0 AND a.privilege_type = 'EXECUTE'), false) AS public
         FROM pg_proc p LEFT JOIN LATERAL aclexplode(p.proacl) a ON true
        WHERE p.pronamespace = 'public'::regnamespace AND p.prorettype <> 'trigger'::regtype
        GROUP BY p.oid, p.proname, p.prosecdef`,
      [TEST_RUNTIME_ROLE],
    );
    expect(rows.map((r) => r.name).sort()).toEqual(Object.keys(RUNTIME_FUNCTION_PRIVILEGES).sort());
    // The functions the worker's and edge's roles call run as their owner (ADR 0070); the rest
    // as the caller. Billing itself admits through the batch function, not edge's form of it.
    const definers = new Set<string>([...WORKER_FUNCTIONS, ...EDGE_FUNCTIONS]);
    for (const row of rows) {
      const invoker = !definers.has(row.name);
      const runtime = row.name !== 'billing_admit_api_keys_v1';
      expect(row).toEqual({ name: row.name, invoker, runtime, public: false });
    }
    // The role can call them although PUBLIC cannot.
    const runtime = await connect(db.runtimeUrl);
    await expect(
      runtime.query("SELECT * FROM ledger_void_hold('none', now())"),
    ).resolves.toMatchObject({ rows: [{ outcome: 'not_found' }] });
  });

  it('re-grants idempotently, restoring a privilege taken away and removing one added', async () => {
    const owner = await connect(db.url);
    await owner.query(`REVOKE INSERT ON ledger_entries FROM ${TEST_RUNTIME_ROLE}`);
    await owner.query(`GRANT DELETE ON ledger_entries TO ${TEST_RUNTIME_ROLE}`);
    await migrateDatabase(db.url, { runtimeRole: TEST_RUNTIME_ROLE });
    await migrateDatabase(db.url, { runtimeRole: TEST_RUNTIME_ROLE });
    const { rows } = await owner.query<{ insert: boolean; delete: boolean }>(
      `SELECT has_table_privilege($1, 'ledger_entries', 'INSERT') AS insert,
              has_table_privilege($1, 'ledger_entries', 'DELETE') AS delete`,
      [TEST_RUNTIME_ROLE],
    );
    expect(rows).toEqual([{ insert: true, delete: false }]);
  });

  it('refuses a runtime role that is missing, the owner itself or a superuser', async () => {
    await expect(migrateDatabase(db.url, { runtimeRole: 'no_such_role' })).rejects.toThrow(
      /no_such_role does not exist/,
    );
    await expect(migrateDatabase(db.url, { runtimeRole: 'postgres' })).rejects.toThrow(
      /superuser or can act as the migration role/,
    );
  });

  it('refuses a runtime role that is a member of the migration role', async () => {
    await createTestRole('billing_rt_owner');
    await createTestRole('billing_rt_member');
    const owner = await connect(db.url);
    await owner.query('GRANT billing_rt_owner TO billing_rt_member');
    await owner.query('GRANT ALL ON SCHEMA public TO billing_rt_owner');
    await owner.query('GRANT ALL ON ALL TABLES IN SCHEMA public TO billing_rt_owner');
    await expect(
      migrateDatabase(urlAsRole(db.url, 'billing_rt_owner'), { runtimeRole: 'billing_rt_member' }),
    ).rejects.toThrow(/can act as the migration role/);
  });
});
