import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestRole, rolePrivileges, sortedPrivileges, urlAsRole } from '@gateway/testing';
import pg from 'pg';
import {
  ANY_AMOUNT_MODEL,
  DZD,
  admitHold,
  createLedgerHarness,
  type LedgerHarness,
} from '../ledger/ledger-test-support.suite.js';
import { FINANCE_GRANTS } from './finance-grants.js';
import { migrateDatabase } from './migrate.js';

/*
 * Finance's read-only SQL door against the real PostgreSQL: the role granted by the migrator
 * reads the finance views, and nothing else of billing's database. What the views read is
 * written by billing's own paths (the ledger harness: its holds placed through admission), so the
 * views are tested on the rows production writes, and the harness checks the ledger's
 * invariants at the end.
 */

const FINANCE_ROLE = 'billing_finance_test';
let h: LedgerHarness;
let owner: pg.Client;
let finance: pg.Client;
let seeded: Seeded;

beforeAll(async () => {
  h = await createLedgerHarness();
  await createTestRole(FINANCE_ROLE);
  await migrateDatabase(h.databaseUrl, { financeRole: FINANCE_ROLE });
  owner = new pg.Client({ connectionString: h.databaseUrl });
  finance = new pg.Client({ connectionString: urlAsRole(h.databaseUrl, FINANCE_ROLE) });
  await Promise.all([owner.connect(), finance.connect()]);
  seeded = await seedLedger();
});

afterAll(async () => {
  await Promise.all([owner?.end(), finance?.end()]);
  await h?.finish();
});

/** Moves the harness's clock to `iso`. */
const at = (iso: string) => h.clock.advance(Date.parse(iso) - h.clock.now().getTime());

/**
 * Through billing's own paths (credit, admission, settlement, refund), on a model whose input
 * costs 0.5 DZD per million tokens: a customer credited 10 DZD, one settled request of 1.5 DZD,
 * one priority request of 0.6 DZD refunded later.
 */
async function seedLedger(): Promise<Seeded> {
  at('2027-01-05T10:00:00Z');
  const accountId = await h.createAccount('Finance Co');
  await h.ledger.credit({ accountId, amountMicroDzd: 10n * DZD, reference: 'wire 1' });
  at('2027-01-05T11:00:00Z');
  const charged = await admitHold(h, {
    accountId,
    amountMicroDzd: 2n * DZD,
    model: ANY_AMOUNT_MODEL,
  });
  await h.ledger.settleHold(charged.id, { inputTokens: 3_000_000, outputTokens: 0 });
  at('2027-01-05T23:30:00Z');
  const refunded = await admitHold(h, {
    accountId,
    amountMicroDzd: 900_000n,
    model: ANY_AMOUNT_MODEL,
    priority: true,
  });
  // 10^6 tokens × 0.5 DZD per million × 1.2 (priority) = 0.6 DZD.
  await h.ledger.settleHold(refunded.id, { inputTokens: 1_000_000, outputTokens: 0 });
  at('2027-01-06T00:10:00Z');
  await h.ledger.refundHold(refunded.id);
  return { accountId, refundedHoldId: refunded.id };
}

interface Seeded {
  accountId: string;
  /** The refund's reference names it. */
  refundedHoldId: string;
}

describe('the finance role', () => {
  it('has SELECT on the finance views and no privilege on anything else', async () => {
    expect(await rolePrivileges(h.databaseUrl, FINANCE_ROLE)).toEqual({
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
      'SELECT account_name, balance_micro_dzd, reserved_micro_dzd, available_micro_dzd FROM finance_account_balances WHERE account_id = $1',
      [seeded.accountId],
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
        model: ANY_AMOUNT_MODEL,
        priority: false,
        charged_micro_dzd: '1500000',
        refunded_micro_dzd: '0',
        net_revenue_micro_dzd: '1500000',
        settlements: '1',
        refunds: '0',
      },
      {
        day: '2027-01-05',
        model: ANY_AMOUNT_MODEL,
        priority: true,
        charged_micro_dzd: '600000',
        refunded_micro_dzd: '0',
        net_revenue_micro_dzd: '600000',
        settlements: '1',
        refunds: '0',
      },
      {
        day: '2027-01-06',
        model: ANY_AMOUNT_MODEL,
        priority: true,
        charged_micro_dzd: '0',
        refunded_micro_dzd: '600000',
        net_revenue_micro_dzd: '-600000',
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
      {
        kind: 'reversal',
        amount_micro_dzd: '600000',
        reference: `refund of hold ${seeded.refundedHoldId} (${ANY_AMOUNT_MODEL}): the answer was delivered to nobody`,
      },
    ]);
  });

  it('refuses a finance role that could act as the owner', async () => {
    await expect(migrateDatabase(h.databaseUrl, { financeRole: 'postgres' })).rejects.toThrow(
      /superuser or can act as the migration role/,
    );
  });
});
