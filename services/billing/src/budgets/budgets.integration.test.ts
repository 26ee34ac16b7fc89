import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pgPoolOf } from '../db/client.js';
import {
  fundedAccount,
  gatewayErrorOf,
  setUpIdentity,
  type IdentityHarness,
  putStandardChatModel,
} from '../identity/fixtures.suite.js';
import { createLedgerService, type LedgerService } from '../ledger/index.js';
import { verbosePlan } from '../testing/query-plan.suite.js';
import { BudgetRepository } from './budget-repository.js';
import { Budgets } from './budgets.js';

/*
 * Budgets per API key and per scoped token against real PostgreSQL: checked
 * and reserved by admission in its one statement, released and counted when the hold ends,
 * windows that start over at the period's boundary in the budget's zone, a change that starts a
 * new window at once. Every file ends with the ledger's invariant check, which covers budgets.
 */

let h: IdentityHarness;
let ledger: LedgerService;
let budgets: Budgets;
const MODEL = 'org/budget-chat';
// 1 000 input + 500 output tokens at 150 / 600 DZD per million: each hold is 0.45 DZD.

const admit = (key: string, holdId?: string) =>
  h.identity.admission.admit(`Bearer ${key}`, {
    model: MODEL,
    estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
    priority: false,
    ...(holdId === undefined ? {} : { holdId }),
  });
const settle = (holdId: string, inputTokens = 1_000, outputTokens = 100) =>
  ledger.settleHold(holdId, { inputTokens, outputTokens });

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T10:00:00Z' });
  ledger = createLedgerService({ prisma: h.prisma, clock: h.clock.now });
  budgets = new Budgets(new BudgetRepository(pgPoolOf(h.prisma)), h.clock.now);
  await putStandardChatModel(h, MODEL);
});

afterAll(async () => {
  await h?.close();
});

describe('a key budget at admission', () => {
  it('admits while the worst case fits, then refuses 402 naming the budget and its reset', async () => {
    h.clock.set('2030-01-01T10:00:00Z');
    const t = await fundedAccount(h);
    // Room for exactly two holds of 0.45 DZD.
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '0.9', period: 'day' });
    await admit(t.key, 'hold_b1');
    await admit(t.key, 'hold_b2');
    const refused = await gatewayErrorOf(admit(t.key, 'hold_b3'));
    expect(refused.code).toBe('budget_exhausted');
    expect(refused.message).toBe(
      "Budget of API key 'auto' exhausted: 0 DZD of 0.9 DZD spent this day (0.9 DZD more held " +
        'by requests in progress), and this request may cost up to 0.45 DZD. It resets at ' +
        '2030-01-02T00:00:00.000Z.',
    );
    expect(await h.prisma.hold.count({ where: { id: 'hold_b3' } })).toBe(0);
    expect(await budgets.getForKey(t.accountId, 'auto')).toMatchObject({
      reserved_micro_dzd: '900000',
      spent_micro_dzd: '0',
      remaining_micro_dzd: '0',
    });
    // A settled hold frees its reservation and counts its cost: 1 000 in + 100 out = 0.21 DZD.
    await settle('hold_b1');
    expect(await budgets.getForKey(t.accountId, 'auto')).toMatchObject({
      reserved_micro_dzd: '450000',
      spent_micro_dzd: '210000',
      remaining_micro_dzd: '240000',
    });
    expect((await gatewayErrorOf(admit(t.key))).code).toBe('budget_exhausted');
    // A void frees without cost.
    await ledger.voidHold('hold_b2');
    await admit(t.key, 'hold_b4');
    expect(await budgets.getForKey(t.accountId, 'auto')).toMatchObject({
      reserved_micro_dzd: '450000',
      spent_micro_dzd: '210000',
    });
    await settle('hold_b4', 0, 0);
  });

  it('never overspends under concurrent admissions from two billing wirings', async () => {
    h.clock.set('2030-01-01T10:00:00Z');
    const t = await fundedAccount(h);
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '2.25', period: 'total' });
    const other = h.newIdentity();
    const attempts = Array.from({ length: 20 }, (_, i) =>
      (i % 2 === 0 ? h.identity : other.identity).admission.admit(`Bearer ${t.key}`, {
        model: MODEL,
        estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
        priority: false,
      }),
    );
    const results = await Promise.allSettled(attempts);
    const admitted = results.filter((r) => r.status === 'fulfilled');
    expect(admitted).toHaveLength(5);
    for (const r of results) {
      if (r.status === 'rejected')
        expect((r.reason as { code: string }).code).toBe('budget_exhausted');
    }
    for (const r of admitted) {
      await ledger.voidHold(
        (r as PromiseFulfilledResult<{ admission: { hold: { id: string } } }>).value.admission.hold
          .id,
      );
    }
  });
});

describe('a hold released unpublished, then settled', () => {
  it('counts its cost as spent, and never more than the budget has room for', async () => {
    h.clock.set('2030-01-01T10:00:00Z');
    const t = await fundedAccount(h);
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '0.9', period: 'day' });
    // The sweeper releases both (their publish marks never came); their jobs ran anyway.
    const sweeping = createLedgerService({
      prisma: h.prisma,
      clock: h.clock.now,
      holdPublishGraceMs: 1_000,
    });
    await admit(t.key, 'hold_r1');
    await admit(t.key, 'hold_r2');
    expect(await sweeping.expireHolds(new Date(h.clock.now().getTime() + 1_000))).toBe(2);
    expect((await settle('hold_r1')).costMicroDzd).toBe(210_000n);
    await admit(t.key, 'hold_r3');
    // Room left: 0.9 − 0.21 spent − 0.45 held = 0.24 DZD, below its 0.45 DZD usage.
    expect((await settle('hold_r2', 1_000, 500)).costMicroDzd).toBe(240_000n);
    expect(await budgets.getForKey(t.accountId, 'auto')).toMatchObject({
      reserved_micro_dzd: '450000',
      spent_micro_dzd: '450000',
      remaining_micro_dzd: '0',
    });
    await ledger.voidHold('hold_r3');
  });
});

describe('windows', () => {
  it('starts over at midnight in the budget zone; a hold of the old window counts there', async () => {
    // 23:30 in Algiers (UTC+1) is 22:30 UTC.
    h.clock.set('2030-01-01T22:30:00Z');
    const t = await fundedAccount(h);
    await budgets.putForKey(t.accountId, 'auto', {
      limit_dzd: '0.5',
      period: 'day',
      time_zone: 'Africa/Algiers',
    });
    expect((await budgets.getForKey(t.accountId, 'auto')).resets_at).toBe(
      '2030-01-01T23:00:00.000Z',
    );
    await admit(t.key, 'hold_w1');
    expect((await gatewayErrorOf(admit(t.key))).code).toBe('budget_exhausted');
    // Past midnight in Algiers: a new window, but the pending hold still reserves.
    h.clock.set('2030-01-01T23:00:00Z');
    expect((await gatewayErrorOf(admit(t.key))).code).toBe('budget_exhausted');
    // It settles now; its cost belongs to the window it was admitted in, not the new one.
    await settle('hold_w1');
    const view = await budgets.getForKey(t.accountId, 'auto');
    expect(view).toMatchObject({
      window_start: '2030-01-01T23:00:00.000Z',
      resets_at: '2030-01-02T23:00:00.000Z',
      spent_micro_dzd: '0',
      reserved_micro_dzd: '0',
    });
    await settle((await admit(t.key)).admission.hold.id);
  });

  it("counts a request whose clock read came just before its window began (another replica's)", async () => {
    h.clock.set('2030-01-20T10:00:00Z');
    const t = await fundedAccount(h);
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '1', period: 'day' });
    // This billing's clock is 10 ms behind the one that started the window.
    h.clock.set('2030-01-20T09:59:59.990Z');
    const { admission } = await admit(t.key);
    await settle(admission.hold.id);
    h.clock.set('2030-01-20T10:00:01Z');
    expect((await budgets.getForKey(t.accountId, 'auto')).spent_micro_dzd).toBe('210000');
  });

  it('a change of period or limit starts a new window at once', async () => {
    h.clock.set('2030-01-10T12:00:00Z');
    const t = await fundedAccount(h);
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '1', period: 'month' });
    await settle((await admit(t.key)).admission.hold.id);
    expect((await budgets.getForKey(t.accountId, 'auto')).spent_micro_dzd).toBe('210000');
    // The same values again: nothing changes.
    h.clock.set('2030-01-10T13:00:00Z');
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '1', period: 'month' });
    expect((await budgets.getForKey(t.accountId, 'auto')).spent_micro_dzd).toBe('210000');
    // A new period: a new window from now, nothing spent in it; it ends at the week's boundary.
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '1', period: 'week' });
    expect(await budgets.getForKey(t.accountId, 'auto')).toMatchObject({
      spent_micro_dzd: '0',
      window_start: '2030-01-10T13:00:00.000Z',
      resets_at: '2030-01-14T00:00:00.000Z',
    });
  });

  it.each([
    // [zone, period, at, window start, resets at]
    ['UTC', 'week', '2030-01-09T12:00:00Z', '2030-01-07T00:00:00.000Z', '2030-01-14T00:00:00.000Z'],
    [
      'UTC',
      'month',
      '2030-02-28T23:59:59Z',
      '2030-02-01T00:00:00.000Z',
      '2030-03-01T00:00:00.000Z',
    ],
    [
      'Africa/Algiers',
      'month',
      '2030-03-01T00:30:00Z',
      '2030-02-28T23:00:00.000Z',
      '2030-03-31T23:00:00.000Z',
    ],
    // Paris: 31 March 2030 is 23 hours long (CET → CEST), 27 October 25 hours.
    [
      'Europe/Paris',
      'day',
      '2030-03-31T12:00:00Z',
      '2030-03-30T23:00:00.000Z',
      '2030-03-31T22:00:00.000Z',
    ],
    [
      'Europe/Paris',
      'day',
      '2030-10-27T12:00:00Z',
      '2030-10-26T22:00:00.000Z',
      '2030-10-27T23:00:00.000Z',
    ],
    [
      'Europe/Paris',
      'week',
      '2030-03-31T21:59:00Z',
      '2030-03-24T23:00:00.000Z',
      '2030-03-31T22:00:00.000Z',
    ],
  ])('%s %s window at %s: %s to %s', async (zone, period, at, start, end) => {
    const { rows } = await h.sql.query<{ start: Date; end: Date }>(
      `SELECT billing_budget_window_start($1, $2, $3::timestamptz) AS start,
              billing_budget_resets_at($1, $2, billing_budget_window_start($1, $2, $3::timestamptz)) AS end`,
      [period, zone, at],
    );
    expect([rows[0]!.start.toISOString(), rows[0]!.end.toISOString()]).toEqual([start, end]);
  });

  it.each([
    // [zone, local time, its first instant]
    // Paris falls back on 27 October 2030: 02:30 happens twice, first in summer time.
    ['Europe/Paris', '2030-10-27 02:30', '2030-10-27T00:30:00.000Z'],
    // ...and springs forward on 31 March: 02:30 never happens; 03:30 summer time comes first.
    ['Europe/Paris', '2030-03-31 02:30', '2030-03-31T01:30:00.000Z'],
    // Lord Howe Island falls back by 30 minutes: 01:45 happens twice.
    ['Australia/Lord_Howe', '2030-04-07 01:45', '2030-04-06T14:45:00.000Z'],
    ['Africa/Algiers', '2030-06-01 00:00', '2030-05-31T23:00:00.000Z'],
  ])('in %s, local %s first happens at %s', async (zone, local, instant) => {
    const { rows } = await h.sql.query<{ at: Date }>(
      'SELECT billing_budget_instant($1::timestamp, $2) AS at',
      [local, zone],
    );
    expect(rows[0]!.at.toISOString()).toBe(instant);
  });

  it('the window functions are inlined where they are called, not run as functions', async () => {
    // A SQL function the planner cannot inline (one with SET, or a FROM) is parsed and
    // planned again in every transaction that calls it: 0.12 ms per budget an admission checks.
    const plan = await verbosePlan(
      h.sql,
      `SELECT billing_budget_window_start('day', 'Europe/Paris', at),
              billing_budget_resets_at('week', 'Europe/Paris', at)
         FROM generate_series(now(), now() + interval '1 day', interval '1 hour') AS at`,
    );
    expect(plan).toContain('date_trunc');
    expect(plan).not.toMatch(/billing_budget_(window_start|resets_at|instant)/);
  });
});

describe('scoped tokens', () => {
  it('a token is held to its own budget and to its signing key’s', async () => {
    h.clock.set('2030-02-01T10:00:00Z');
    const t = await fundedAccount(h);
    const { token } = await h.identity.scopedTokens.create(t.accountId, {
      api_key_name: 'auto',
      models: [MODEL],
      expires_delta: 3_600,
    });
    // The token's first request registers it.
    const first = await admit(token);
    const tokenId =
      first.principal.kind === 'scoped_token' ? (first.principal.token?.id ?? '') : '';
    // Room for one more hold of 0.45 DZD.
    await budgets.putForToken(t.accountId, tokenId, { limit_dzd: '0.5', period: 'total' });
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '10', period: 'day' });
    await admit(token);
    const refused = await gatewayErrorOf(admit(token));
    expect(refused.code).toBe('budget_exhausted');
    expect(refused.message).toContain(`Budget of scoped token ${tokenId} exhausted`);
    expect(refused.message).toContain('spent in total');
    expect(refused.message).toContain('It does not reset.');
    // Both holds reserve on the key's budget too (the first was admitted before it existed).
    expect((await budgets.getForKey(t.accountId, 'auto')).reserved_micro_dzd).toBe('450000');
    await ledger.voidHold(first.admission.hold.id);
    const pendingHolds = await h.prisma.hold.findMany({
      where: { accountId: t.accountId, status: 'pending' },
    });
    for (const hold of pendingHolds) await ledger.voidHold(hold.id);
    expect((await budgets.getForKey(t.accountId, 'auto')).reserved_micro_dzd).toBe('0');
  });
});
