import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PeriodReport } from '@gateway/contracts';
import {
  putChatModel,
  startBillingApi,
  type BillingApiUnderTest,
} from '../http/billing-api.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * Finance's period report over a seeded September 2026 (Africa/Algiers, UTC+1): an opening
 * balance from August, credits, usage on two models (one at the priority tier), a refund, a
 * suspended account, a hold still open at the end, and a correction posted after the month.
 * Entries are written through billing's own API and then backdated as the database owner (the
 * ledger's triggers off for that session only): the ledger cannot be told another date.
 */

const SEPTEMBER = { from: '2026-09-01', to: '2026-09-30', time_zone: 'Africa/Algiers' };
/** After September, up to a year: where the correction posted now lands. */
const LATER = { from: '2026-10-01', to: '2027-09-30', time_zone: 'Africa/Algiers' };
const MODELS = { small: 'acme/report-small', large: 'acme/report-large' } as const;

let billing: BillingApiUnderTest;
let owner: pg.Client;

beforeAll(async () => {
  billing = await startBillingApi();
  owner = new pg.Client({ connectionString: billing.ownerUrl });
  await owner.connect();
  await putChatModel(billing, {
    id: MODELS.small,
    inputPriceDzdPerM: 1_000,
    outputPriceDzdPerM: 2_000,
    maxOutputTokens: 100,
  });
  await putChatModel(billing, {
    id: MODELS.large,
    inputPriceDzdPerM: 5_000,
    outputPriceDzdPerM: 9_000,
    maxOutputTokens: 100,
  });
});

afterAll(async () => {
  await owner?.end();
  await billing?.close();
});

async function credit(accountId: string, amountDzd: number, reference: string) {
  const answer = await billing
    .call('post', `/admin/accounts/${accountId}/credits`)
    .send({ amount_dzd: amountDzd, reference });
  expect(answer.status).toBe(200);
}

let holdSeq = 0;
/** An admitted request, settled for its tokens unless `open`. */
async function request(
  key: string,
  model: string,
  tokens: { input: number; output: number },
  options: { priority?: boolean; open?: boolean } = {},
): Promise<string> {
  holdSeq += 1;
  const holdId = `job-report-${holdSeq}`;
  const admitted = await billing.call('post', '/admissions').send({
    authorization: `Bearer ${key}`,
    holdId,
    model,
    estimate: { inputTokens: tokens.input, maxOutputTokens: 100, choices: 1 },
    priority: options.priority ?? false,
    endpoint: 'chat.completions',
  });
  expect(admitted.status).toBe(200);
  if (options.open) return holdId;
  const settled = await billing.call('post', `/holds/${holdId}/settle`, 'worker').send({
    inputTokens: tokens.input,
    outputTokens: tokens.output,
  });
  expect(settled.status).toBe(200);
  return holdId;
}

/** Moves everything written since `mark` (ledger, holds, usage records) to `at`. */
async function backdate(mark: { entryId: string; holds: string[] }, at: string) {
  await owner.query('BEGIN');
  await owner.query('SET LOCAL session_replication_role = replica');
  await owner.query(
    `UPDATE ledger_transactions SET created_at = $2
      WHERE id IN (SELECT transaction_id FROM ledger_entries WHERE id > $1)`,
    [mark.entryId, at],
  );
  await owner.query('UPDATE ledger_entries SET created_at = $2 WHERE id > $1', [mark.entryId, at]);
  await owner.query(
    `UPDATE holds SET created_at = $2,
            finalized_at = CASE WHEN finalized_at IS NULL THEN NULL ELSE $2::timestamptz END,
            refunded_at = CASE WHEN refunded_at IS NULL THEN NULL ELSE $2::timestamptz END,
            expires_at = $2::timestamptz + interval '100 years'
      WHERE id = ANY($1)`,
    [mark.holds, at],
  );
  await owner.query(
    `UPDATE usage_records SET created_at = $2, ended_at = $2,
            refunded_at = CASE WHEN refunded_at IS NULL THEN NULL ELSE $2::timestamptz END
      WHERE hold_id = ANY($1)`,
    [mark.holds, at],
  );
  await owner.query('COMMIT');
}

async function markNow(): Promise<{ entryId: string; holds: string[] }> {
  const { rows } = await owner.query<{ id: string }>(
    'SELECT COALESCE(max(id), 0)::text AS id FROM ledger_entries',
  );
  return { entryId: rows[0]!.id, holds: [] };
}

async function report(query: Record<string, string> = SEPTEMBER): Promise<PeriodReport> {
  const answer = await billing.call('get', `/admin/ledger/report?${new URLSearchParams(query)}`);
  expect(answer.status).toBe(200);
  return answer.body as PeriodReport;
}

const micro = (value: string) => BigInt(value);

describe('the period report over a seeded month', () => {
  let alice: FundedAccount;
  let bob: FundedAccount;
  let refundedHold: string;

  beforeAll(async () => {
    // Credited month by month below.
    alice = await fundAccount(billing.operator, { name: 'Alice', keyName: 'k', creditDzd: 0 });
    bob = await fundAccount(billing.operator, { name: 'Bob', keyName: 'k', creditDzd: 0 });
    // August: Alice's opening balance.
    const august = await markNow();
    await credit(alice.accountId, 100, 'august top-up');
    august.holds.push(await request(alice.apiKey, MODELS.small, { input: 1_000, output: 100 }));
    await backdate(august, '2026-08-20T10:00:00Z');
    // September, local time: usage on both models, a refund, Bob funded then suspended.
    const september = await markNow();
    await credit(alice.accountId, 50, 'september top-up');
    await credit(bob.accountId, 20, 'bob');
    september.holds.push(await request(alice.apiKey, MODELS.small, { input: 2_000, output: 100 }));
    september.holds.push(
      await request(alice.apiKey, MODELS.large, { input: 500, output: 200 }, { priority: true }),
    );
    refundedHold = await request(bob.apiKey, MODELS.large, { input: 100, output: 100 });
    september.holds.push(refundedHold);
    expect((await billing.call('post', `/holds/${refundedHold}/refund`)).status).toBe(200);
    // 00:30 on 1 September in Algiers is still 31 August in UTC: the zone decides.
    await backdate(september, '2026-08-31T23:30:00Z');
    await billing.call('post', `/admin/accounts/${bob.accountId}/suspend`);
    // Open at the end: admitted on 30 September, not ended by midnight.
    const open = await markNow();
    open.holds.push(
      await request(alice.apiKey, MODELS.small, { input: 10, output: 0 }, { open: true }),
    );
    await backdate(open, '2026-09-30T20:00:00Z');
    // October (now): a correction after the month.
    await credit(alice.accountId, 5, 'correction');
  });

  it('the trial balance sums to zero and every identity holds', async () => {
    const r = await report();
    expect(r.checks).toEqual({
      trial_balance_sums_to_zero: true,
      roll_forward_holds: true,
      liability_equals_customers_line: true,
      revenue_equals_revenue_account: true,
    });
    expect(r.trial_balance.lines.map((line) => line.ledger_account)).toEqual([
      'customers',
      'system:funding',
      'system:revenue',
    ]);
    expect(r.trial_balance.totals.closing_micro_dzd).toBe('0');
    expect(r.period).toMatchObject({
      starts_at: '2026-08-31T23:00:00.000Z',
      ends_at: '2026-09-30T23:00:00.000Z',
    });
  });

  it("rolls each customer's liability forward from August's closing to September's", async () => {
    const r = await report();
    const byId = new Map(r.customer_liability.accounts.map((a) => [a.account_id, a]));
    const a = byId.get(alice.accountId)!;
    // August: 100 DZD in; 1,000 input and 100 output tokens of the small model out.
    expect(micro(a.opening_micro_dzd)).toBe(100_000_000n - (1_000n * 1_000n + 100n * 2_000n));
    expect(a.credits_micro_dzd).toBe('50000000');
    expect(a.refunds_micro_dzd).toBe('0');
    const b = byId.get(bob.accountId)!;
    expect(b).toMatchObject({
      status: 'suspended',
      opening_micro_dzd: '0',
      credits_micro_dzd: '20000000',
    });
    expect(b.refunds_micro_dzd).toBe(b.usage_micro_dzd);
    expect(b.closing_micro_dzd).toBe('20000000');
    for (const account of [a, b, r.customer_liability.total]) {
      expect(account.difference_micro_dzd).toBe('0');
    }
    // The correction posted in October is not September's.
    expect(micro(r.customer_liability.total.credits_micro_dzd)).toBe(70_000_000n);
  });

  it('revenue equals the settled costs of the usage records, by model and tier', async () => {
    const r = await report();
    const netBy = async (column: 'model' | 'priority') => {
      const { rows } = await owner.query<{ key: string; net: string }>(
        `SELECT ${column}::text AS key, sum(cost_micro_dzd - refunded_micro_dzd)::text AS net
           FROM usage_records
          WHERE ended_at >= '2026-08-31T23:00:00Z' AND ended_at < '2026-09-30T23:00:00Z'
          GROUP BY 1 ORDER BY 1`,
      );
      return rows.map((row) => [row.key, row.net]);
    };
    expect(r.revenue.by_model.map((g) => [g.model, g.net_micro_dzd])).toEqual(await netBy('model'));
    const tiers = r.revenue.by_tier.map((g) => [
      g.tier === 'priority' ? 'true' : 'false',
      g.net_micro_dzd,
    ]);
    expect(tiers).toEqual(await netBy('priority'));
    // Local days: the movements at 00:30 Algiers time belong to 1 September.
    expect(r.revenue.by_day.map((g) => g.day)).toEqual(['2026-09-01']);
    expect(micro(r.revenue.total.refunded_micro_dzd)).toBeGreaterThan(0n);
    expect(r.open_holds.count).toBe(1);
    expect(micro(r.open_holds.reserved_micro_dzd)).toBeGreaterThan(0n);
  });

  it('the same dates in UTC move the first hour to August', async () => {
    const r = await report({ ...SEPTEMBER, time_zone: 'UTC' });
    expect(r.checks.roll_forward_holds).toBe(true);
    expect(r.customer_liability.total.credits_micro_dzd).toBe('0');
  });

  it('pages the accounts and serves each table as CSV', async () => {
    const first = await report({ ...SEPTEMBER, limit: '1' });
    expect(first.customer_liability.accounts).toHaveLength(1);
    const second = await report({
      ...SEPTEMBER,
      limit: '1',
      cursor: first.customer_liability.next_cursor!,
    });
    expect(second.customer_liability.accounts).toHaveLength(1);
    expect(second.customer_liability.next_cursor).toBeNull();
    const csv = await billing
      .call('get', `/admin/ledger/report?${new URLSearchParams(SEPTEMBER)}`)
      .set('Accept', 'text/csv');
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe(
      'account_id,name,status,opening_micro_dzd,credits_micro_dzd,usage_micro_dzd,refunds_micro_dzd,adjustments_micro_dzd,closing_micro_dzd,difference_micro_dzd',
    );
    expect(lines.at(-1)).toMatch(/^total,,,/);
    // A download is the whole book: every account, whatever page size the query names.
    const paged = await billing
      .call('get', `/admin/ledger/report?${new URLSearchParams({ ...SEPTEMBER, limit: '1' })}`)
      .set('Accept', 'text/csv');
    expect(paged.text.trim().split('\r\n')).toHaveLength(lines.length);
    expect(lines).toHaveLength(1 + 2 + 1);
    const revenue = await billing.call(
      'get',
      `/admin/ledger/report?${new URLSearchParams({ ...SEPTEMBER, format: 'csv', section: 'revenue' })}`,
    );
    expect(revenue.text.split('\r\n')[0]).toBe(
      'day,model,tier,settlements,refunds,charged_micro_dzd,refunded_micro_dzd,net_micro_dzd',
    );
  });

  it('refuses a bad period with a clear 400', async () => {
    for (const [query, param] of [
      [{ from: '2026-09-31', to: '2026-10-01' }, 'from'],
      [{ from: '2026-09-10', to: '2026-09-01' }, 'to'],
      [{ from: '2025-01-01', to: '2026-09-01' }, 'to'],
      [{ ...SEPTEMBER, time_zone: 'localtime' }, 'time_zone'],
      [{ ...SEPTEMBER, limit: '0' }, 'limit'],
    ] as const) {
      const answer = await billing.call(
        'get',
        `/admin/ledger/report?${new URLSearchParams(query)}`,
      );
      expect([answer.status, answer.body.error?.code, answer.body.error?.param]).toEqual([
        400,
        'invalid_request_body',
        param,
      ]);
    }
  });

  it('closes September once: its report and digest kept, the correction after it in the open period', async () => {
    const before = await report();
    const afterSeptember = await report(LATER);
    const closed = await billing
      .call('post', '/admin/ledger/periods/2026-09/close')
      .send({ closed_by: 'finance@example.com' });
    expect(closed.status).toBe(201);
    expect(closed.body).toMatchObject({
      object: 'ledger_period',
      period: '2026-09',
      time_zone: 'Africa/Algiers',
      closed_by: 'finance@example.com',
      entries_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(closed.body.entries_count).toBeGreaterThan(0);
    expect(closed.body.report.customer_liability.total).toEqual(before.customer_liability.total);
    // Its balances carried forward: the books balance, and a later report opening from them
    // reads exactly as it read from every entry since the ledger began.
    const { rows: carried } = await owner.query<{
      accounts: number;
      total: string;
      customers: string;
    }>(
      `SELECT count(*)::int AS accounts, sum(closing_micro_dzd)::text AS total,
              sum(closing_micro_dzd) FILTER (WHERE ledger_account LIKE 'customer:%')::text AS customers
         FROM ledger_period_balances WHERE period = '2026-09'`,
    );
    expect(carried[0]).toEqual({
      accounts: 4, // Alice, Bob, funding, revenue
      total: '0',
      customers: before.customer_liability.total.closing_micro_dzd,
    });
    expect(await report(LATER)).toEqual(afterSeptember);
    const again = await billing.call('post', '/admin/ledger/periods/2026-09/close').send({});
    expect([again.status, again.body.error.code]).toEqual([409, 'conflict']);
    const early = await billing.call('post', '/admin/ledger/periods/2099-01/close').send({});
    expect([early.status, early.body.error.code]).toEqual([409, 'conflict']);
    // A correction now: September's books do not move, and the check recomputes them clean.
    await credit(alice.accountId, 1, 'correction after the close');
    expect((await report()).customer_liability.total).toEqual(before.customer_liability.total);
    const check = await billing.call('get', '/admin/ledger/check');
    expect(check.body).toEqual({ ok: true, violations: [] });
    const list = await billing.call('get', '/admin/ledger/periods');
    expect(list.body.data.map((p: { period: string }) => p.period)).toEqual(['2026-09']);
  });

  it('the check names a closed period whose entries were changed behind the ledger', async () => {
    const { rows } = await owner.query<{ transaction_id: string; created_at: Date }>(
      `SELECT transaction_id, created_at FROM ledger_entries
        WHERE created_at < '2026-08-31T23:00:00Z' ORDER BY id LIMIT 1`,
    );
    const moved = rows[0]!;
    const shift = async (at: Date | string) => {
      await owner.query('BEGIN');
      await owner.query('SET LOCAL session_replication_role = replica');
      await owner.query('UPDATE ledger_entries SET created_at = $2 WHERE transaction_id = $1', [
        moved.transaction_id,
        at,
      ]);
      await owner.query('COMMIT');
    };
    await shift('2026-09-15T12:00:00Z');
    try {
      const check = await billing.call('get', '/admin/ledger/check');
      expect(check.body.ok).toBe(false);
      // Moved alone, the entries no longer have their transaction's time either.
      expect(check.body.violations).toEqual([
        expect.stringMatching(
          /^every entry at its transaction's time; .*: entry \d+ of transaction /,
        ),
        expect.stringMatching(
          /^every entry at its transaction's time; .*: entry \d+ of transaction /,
        ),
        expect.stringMatching(/^closed period 2026-09: its entries changed since the close/),
      ]);
    } finally {
      await shift(moved.created_at);
    }
    expect((await billing.call('get', '/admin/ledger/check')).body.ok).toBe(true);
  });

  it('the check names a closed period whose carried-forward balances were changed', async () => {
    const tamper = (delta: number) =>
      owner.query(
        `UPDATE ledger_period_balances SET closing_micro_dzd = closing_micro_dzd + $2
          WHERE period = '2026-09' AND ledger_account = $1`,
        [`customer:${alice.accountId}`, delta],
      );
    await tamper(1);
    try {
      const check = await billing.call('get', '/admin/ledger/check');
      expect(check.body).toEqual({
        ok: false,
        violations: [
          'closed period 2026-09: 1 carried-forward balances differ from the previous close and its entries',
        ],
      });
    } finally {
      await tamper(-1);
    }
    expect((await billing.call('get', '/admin/ledger/check')).body.ok).toBe(true);
  });
});
