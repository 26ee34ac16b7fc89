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
import { FINANCE_GRANTS } from './finance-grants.js';
import { migrateDatabase } from './migrate.js';

/*
 * Finance's read-only SQL door against the real PostgreSQL: the role granted by the migrator
 * reads the finance views, and nothing else of billing's database.
 */

const FINANCE_ROLE = 'billing_finance_test';
let db: TestDatabase;
let owner: pg.Client;
let finance: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  await createTestRole(FINANCE_ROLE);
  await migrateDatabase(db.url, { financeRole: FINANCE_ROLE });
  owner = new pg.Client({ connectionString: db.url });
  finance = new pg.Client({ connectionString: urlAsRole(db.url, FINANCE_ROLE) });
  await Promise.all([owner.connect(), finance.connect()]);
  await seedLedger();
});

afterAll(async () => {
  await Promise.all([owner?.end(), finance?.end()]);
  await db?.drop();
});

/**
 * As the owner: a customer credited 10 DZD, one settled request of 1.5 DZD on acme/chat, one
 * priority request of 0.5 DZD refunded later, and an API key with its digest and secret.
 */
async function seedLedger(): Promise<void> {
  await owner.query(`
    INSERT INTO accounts (id, name) VALUES ('usr_fin', 'Finance Co');
    -- The balance projection billing keeps with each posting (credits 10 + 0.5, debits 2).
    INSERT INTO account_balances (account_id, posted_credits_micro_dzd, posted_debits_micro_dzd)
    VALUES ('usr_fin', 10500000, 2000000);
    INSERT INTO api_keys (id, account_id, name, key_digest, secret_ciphertext, secret_nonce,
                          secret_auth_tag)
    VALUES ('key_fin', 'usr_fin', 'auto', 'digest-not-for-finance', '\\x00', '\\x00', '\\x00');
    INSERT INTO ledger_transactions (id, kind, account_id, reference, created_at)
    VALUES ('txn_credit', 'credit', 'usr_fin', 'wire 1', '2027-01-05T10:00:00Z');
    INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                created_at)
    VALUES ('txn_credit', 'system:funding', NULL, -10000000, '2027-01-05T10:00:00Z'),
           ('txn_credit', 'customer:usr_fin', 'usr_fin', 10000000, '2027-01-05T10:00:00Z');
    INSERT INTO holds (id, account_id, amount_micro_dzd, status, settled_amount_micro_dzd, model,
                       priority, expires_at, created_at, refunded_at)
    VALUES ('hold_a', 'usr_fin', 2000000, 'settled', 1500000, 'acme/chat', false,
            '2027-01-06T00:00:00Z', '2027-01-05T11:00:00Z', NULL),
           ('hold_b', 'usr_fin', 900000, 'settled', 500000, 'acme/chat', true,
            '2027-01-06T00:00:00Z', '2027-01-05T23:30:00Z', '2027-01-06T00:10:00Z');
    INSERT INTO ledger_transactions (id, kind, account_id, hold_id, created_at)
    VALUES ('txn_a', 'hold_settlement', 'usr_fin', 'hold_a', '2027-01-05T11:00:01Z'),
           ('txn_b', 'hold_settlement', 'usr_fin', 'hold_b', '2027-01-05T23:30:01Z');
    INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd)
    VALUES ('txn_a', 'customer:usr_fin', 'usr_fin', -1500000),
           ('txn_a', 'system:revenue', NULL, 1500000),
           ('txn_b', 'customer:usr_fin', 'usr_fin', -500000),
           ('txn_b', 'system:revenue', NULL, 500000);
    INSERT INTO ledger_transactions (id, kind, account_id, reference, created_at)
    VALUES ('txn_refund', 'reversal', 'usr_fin', 'refund of hold hold_b', '2027-01-06T00:10:00Z');
    INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd)
    VALUES ('txn_refund', 'system:revenue', NULL, -500000),
           ('txn_refund', 'customer:usr_fin', 'usr_fin', 500000);
  `);
}

describe('the finance role', () => {
  it('has SELECT on the finance views and no privilege on anything else', async () => {
    expect(await rolePrivileges(db.url, FINANCE_ROLE)).toEqual({
      tables: sortedPrivileges(FINANCE_GRANTS.tables),
      sequences: sortedPrivileges(FINANCE_GRANTS.sequences),
    });
  });

  it.each([
    ['key digests', 'SELECT key_digest FROM api_keys'],
    ['sealed key secrets', 'SELECT secret_ciphertext FROM api_keys'],
    ['scoped tokens', 'SELECT digest FROM scoped_tokens'],
    ['stored answers', 'SELECT * FROM idempotency_records'],
    ['dashboard users', 'SELECT * FROM owner_users'],
    ['operators', 'SELECT * FROM operator_users'],
    ['sessions', 'SELECT * FROM dashboard_sessions'],
    ['the ledger tables behind the views', 'SELECT * FROM ledger_entries'],
    ['holds', 'SELECT * FROM holds'],
    ['usage records', 'SELECT * FROM usage_records'],
    ['stored responses (customer content)', 'SELECT * FROM stored_responses'],
    ['stored response item ids', 'SELECT * FROM stored_response_items'],
    [
      'write the ledger',
      "INSERT INTO ledger_transactions (id, kind, account_id) VALUES ('x', 'credit', 'usr_fin')",
    ],
    ['call the admission', "SELECT * FROM ledger_void_hold('hold_a', now())"],
    ['create a table', 'CREATE TABLE mine (id int)'],
  ])('cannot read or touch %s', async (_what, statement) => {
    await expect(finance.query(statement)).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot write through a view', async () => {
    await expect(
      finance.query("DELETE FROM finance_entries WHERE kind = 'credit'"),
    ).rejects.toThrow();
    await expect(
      finance.query("UPDATE finance_account_balances SET account_name = 'x'"),
    ).rejects.toThrow();
    const { rows } = await owner.query('SELECT count(*)::int AS n FROM ledger_entries');
    expect(rows).toEqual([{ n: 8 }]);
  });

  it('reads every entry with its transaction, summing to zero', async () => {
    const { rows } = await finance.query<{ kind: string; total: string; entries: string }>(
      `SELECT kind, sum(amount_micro_dzd)::text AS total, count(*)::text AS entries
         FROM finance_entries GROUP BY kind ORDER BY kind`,
    );
    expect(rows).toEqual([
      { kind: 'credit', total: '0', entries: '2' },
      { kind: 'hold_settlement', total: '0', entries: '4' },
      { kind: 'reversal', total: '0', entries: '2' },
    ]);
  });

  it("reads the customers' balances", async () => {
    const { rows } = await finance.query(
      "SELECT account_name, balance_micro_dzd, reserved_micro_dzd, available_micro_dzd FROM finance_account_balances WHERE account_id = 'usr_fin'",
    );
    expect(rows).toEqual([
      {
        account_name: 'Finance Co',
        balance_micro_dzd: '8500000',
        reserved_micro_dzd: '0',
        available_micro_dzd: '8500000',
      },
    ]);
  });

  it('reads revenue per UTC day, model and tier, a refund on its own day', async () => {
    const { rows } = await finance.query(
      `SELECT day_utc::text AS day, model, priority, charged_micro_dzd, refunded_micro_dzd,
              net_revenue_micro_dzd, settlements, refunds
         FROM finance_daily_revenue ORDER BY day_utc, priority`,
    );
    expect(rows).toEqual([
      {
        day: '2027-01-05',
        model: 'acme/chat',
        priority: false,
        charged_micro_dzd: '1500000',
        refunded_micro_dzd: '0',
        net_revenue_micro_dzd: '1500000',
        settlements: '1',
        refunds: '0',
      },
      {
        day: '2027-01-05',
        model: 'acme/chat',
        priority: true,
        charged_micro_dzd: '500000',
        refunded_micro_dzd: '0',
        net_revenue_micro_dzd: '500000',
        settlements: '1',
        refunds: '0',
      },
      {
        day: '2027-01-06',
        model: 'acme/chat',
        priority: true,
        charged_micro_dzd: '0',
        refunded_micro_dzd: '500000',
        net_revenue_micro_dzd: '-500000',
        settlements: '0',
        refunds: '1',
      },
    ]);
  });

  it('reads credits and refunds from the customer’s side', async () => {
    const { rows } = await finance.query(
      'SELECT kind, amount_micro_dzd, reference FROM finance_credits_and_refunds ORDER BY created_at',
    );
    expect(rows).toEqual([
      { kind: 'credit', amount_micro_dzd: '10000000', reference: 'wire 1' },
      { kind: 'reversal', amount_micro_dzd: '500000', reference: 'refund of hold hold_b' },
    ]);
  });

  it('refuses a finance role that could act as the owner', async () => {
    await expect(migrateDatabase(db.url, { financeRole: 'postgres' })).rejects.toThrow(
      /superuser or can act as the migration role/,
    );
  });
});
