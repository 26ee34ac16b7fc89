import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@gateway/testing';
import pg from 'pg';
import { billingDatabaseTemplate } from './client.js';

/*
 * The double-entry check (ledger_check_balanced, a statement trigger on ledger_entries) sums the
 * legs a statement inserts, per journal transaction, and reads nothing back from the ledger: a
 * posting costs the same on a ledger of any size, whatever plan a connection cached. Counted
 * with the transaction's own scan statistics, not timed.
 */

let db: TestDatabase;
let owner: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  // Never analyzed, as in the minutes after a burst: the planner knows nothing of its size.
  await owner.query('ALTER TABLE ledger_entries SET (autovacuum_enabled = false)');
  await owner.query(`
    INSERT INTO accounts (id, name) VALUES ('usr_scan', 'a');
    INSERT INTO ledger_transactions (id, kind, account_id)
      SELECT 'txn_' || i, 'credit', 'usr_scan' FROM generate_series(1, 5000) i;
    INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd)
      SELECT 'txn_' || i, 'system:funding', NULL, -1 FROM generate_series(1, 5000) i
      UNION ALL
      SELECT 'txn_' || i, 'customer:usr_scan', 'usr_scan', 1 FROM generate_series(1, 5000) i;
    INSERT INTO ledger_transactions (id, kind, account_id) VALUES ('txn_new', 'credit', 'usr_scan');
  `);
});

afterAll(async () => {
  await owner?.end();
  await db?.drop();
});

it('checks a posting from its own legs, without reading the ledger back', async () => {
  // This backend's counts not yet reported are included: compare before and after.
  const scans = async () => {
    const { rows } = await owner.query<{ seq: string; idx: string }>(
      `SELECT seq_scan::text AS seq, idx_scan::text AS idx FROM pg_stat_xact_user_tables
        WHERE relname = 'ledger_entries'`,
    );
    return { seq: Number(rows[0]?.seq), idx: Number(rows[0]?.idx) };
  };
  await owner.query('BEGIN');
  try {
    const before = await scans();
    await owner.query(
      `INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd)
       VALUES ('txn_new', 'system:funding', NULL, -7), ('txn_new', 'customer:usr_scan', 'usr_scan', 7)`,
    );
    const after = await scans();
    expect({ seq: after.seq - before.seq, idx: after.idx - before.idx }).toEqual({
      seq: 0,
      idx: 0,
    });
  } finally {
    await owner.query('ROLLBACK');
  }
});

it('refuses an unbalanced posting, a lone leg added to a balanced transaction included', async () => {
  for (const values of [
    `('txn_new', 'system:funding', NULL, -7), ('txn_new', 'customer:usr_scan', 'usr_scan', 6)`,
    `('txn_1', 'customer:usr_scan', 'usr_scan', 1)`,
    // Balanced as a whole, but one of the two transactions it touches is not.
    `('txn_new', 'system:funding', NULL, -1), ('txn_2', 'customer:usr_scan', 'usr_scan', 1)`,
  ]) {
    await expect(
      owner.query(
        `INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd)
         VALUES ${values}`,
      ),
    ).rejects.toMatchObject({ code: '23514' });
  }
});
