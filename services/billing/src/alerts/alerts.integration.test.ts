import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseEnvelope, type BudgetThresholdData } from '@gateway/contracts';
import type { MessageBus } from '@gateway/messaging';
import { BudgetRepository } from '../budgets/budget-repository.js';
import { Budgets } from '../budgets/budgets.js';
import { pgPoolOf } from '../db/client.js';
import {
  fundedAccount,
  setUpIdentity,
  type IdentityHarness,
  putStandardChatModel,
} from '../identity/fixtures.suite.js';
import { createLedgerService, type LedgerService } from '../ledger/index.js';
import { AlertEngine } from './alert-engine.js';
import { AlertEvaluator } from './alert-evaluator.js';
import { AlertOutbox } from './alert-outbox.js';
import { AlertRepository } from './alert-repository.js';
import { AlertSettings, openSettings } from './alert-settings.js';

/*
 * Account alerts against real PostgreSQL: each threshold fires once per window
 * however often and on however many evaluators it is evaluated; a new budget window re-arms the
 * budget's thresholds, a credit lifting the balance above its threshold re-arms the balance
 * alert; the outbox publishes each event once the broker confirmed it.
 */

let h: IdentityHarness;
let ledger: LedgerService;
let budgets: Budgets;
let settings: AlertSettings;
let repositories: [AlertRepository, AlertRepository];
let evaluators: [AlertEvaluator, AlertEvaluator];
const MODEL = 'org/alert-chat';
const URL = 'https://alerts.example.com/hook?token=s3cret';
// 1 000 input + 500 output tokens at 150 / 600 DZD per million: each hold is 0.45 DZD.

let holdCount = 0;
async function spend(key: string, inputTokens: number, outputTokens: number): Promise<string> {
  const holdId = `hold_alert_${++holdCount}`;
  await h.identity.admission.admit(`Bearer ${key}`, {
    model: MODEL,
    estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
    priority: false,
    holdId,
  });
  if (inputTokens >= 0) await ledger.settleHold(holdId, { inputTokens, outputTokens });
  return holdId;
}

async function settingsOf(accountId: string) {
  return openSettings(h.keyring, (await repositories[0].find(accountId))!);
}

/** Both evaluators at once over the same state: the ids collide, one event per alert. */
async function evaluateTwiceConcurrently(accountId: string) {
  const state = await settingsOf(accountId);
  const now = h.clock.now();
  const [a, b] = await Promise.all([
    evaluators[0].evaluate(state, now),
    evaluators[1].evaluate(state, now),
  ]);
  return [...a, ...b];
}

interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
}
async function eventsOf(accountId: string): Promise<EventRow[]> {
  const { rows } = await h.sql.query<EventRow>(
    'SELECT id, type, data FROM alert_events WHERE account_id = $1 ORDER BY occurred_at, id',
    [accountId],
  );
  return rows;
}

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T10:00:00Z' });
  ledger = createLedgerService({ prisma: h.prisma, clock: h.clock.now });
  budgets = new Budgets(new BudgetRepository(pgPoolOf(h.prisma)), h.clock.now);
  // Two wirings over the database, as two replicas (each its own pool).
  const pools = [pgPoolOf(h.prisma), pgPoolOf(h.newIdentity().prisma)] as const;
  repositories = [new AlertRepository(pools[0]), new AlertRepository(pools[1])];
  settings = new AlertSettings(repositories[0], h.keyring);
  evaluators = [
    new AlertEvaluator(repositories[0], new BudgetRepository(pools[0])),
    new AlertEvaluator(repositories[1], new BudgetRepository(pools[1])),
  ];
  await putStandardChatModel(h, MODEL);
});

afterAll(async () => {
  await h?.close();
});

describe('alert settings', () => {
  it('stores the URL sealed, sorts thresholds and answers the defaults', async () => {
    const t = await fundedAccount(h);
    const view = await settings.put(t.accountId, {
      url: URL,
      budget_thresholds_percent: [80, 50],
      balance_below_dzd: '2.5',
    });
    expect(view).toMatchObject({
      url: URL,
      enabled: true,
      balance_below_dzd: 2.5,
      balance_below_micro_dzd: '2500000',
      budget_thresholds_percent: [50, 80],
      exhaustion_hours: null,
    });
    const { rows } = await h.sql.query<{ url_ciphertext: Buffer }>(
      'SELECT url_ciphertext FROM alert_settings WHERE account_id = $1',
      [t.accountId],
    );
    expect(rows[0]!.url_ciphertext.toString('latin1')).not.toContain('s3cret');
    const defaults = await settings.put(t.accountId, { url: URL });
    expect(defaults.budget_thresholds_percent).toEqual([50, 80, 100]);
    expect(defaults.balance_below_micro_dzd).toBeNull();
    await settings.remove(t.accountId);
    await expect(settings.get(t.accountId)).rejects.toMatchObject({ code: 'resource_not_found' });
  });
});

describe('budget thresholds', () => {
  it('fires each threshold once per window, even on two evaluators at once', async () => {
    h.clock.set('2030-01-01T10:00:00Z');
    const t = await fundedAccount(h);
    await settings.put(t.accountId, { url: URL });
    // Room for three holds of 0.45 DZD a day.
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '1.35', period: 'day' });

    await spend(t.key, 1_000, 500); // 0.45 settled: 33 %
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    await spend(t.key, 1_000, 500); // 0.90: 66 %
    const fifty = await evaluateTwiceConcurrently(t.accountId);
    expect(fifty.map((e) => e.type)).toEqual(['budget.threshold']);
    expect(fifty[0]!.data).toMatchObject({
      threshold_percent: 50,
      used_micro_dzd: '900000',
      limit_micro_dzd: '1350000',
      budget: { applies_to: 'api_key', owner: 'auto', period: 'day', time_zone: 'UTC' },
      window_start: '2030-01-01T10:00:00.000Z', // a new budget's window starts at once
      resets_at: '2030-01-02T00:00:00.000Z',
    });
    // A pending hold counts as admission counts it: its reservation fills the budget.
    const pending = await spend(t.key, -1, 0);
    const full = await evaluateTwiceConcurrently(t.accountId);
    // Which evaluator claims which threshold is a race; that each fires once is the rule.
    const fired = full.map((e) => (e.data as BudgetThresholdData).threshold_percent);
    expect(fired.sort((a, b) => a - b)).toEqual([80, 100]);
    await ledger.settleHold(pending, { inputTokens: 1_000, outputTokens: 500 });
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    const thresholds = (await eventsOf(t.accountId)).map((e) => Number(e.data.threshold_percent));
    expect(thresholds.sort((a, b) => a - b)).toEqual([50, 80, 100]);
  });

  it('re-arms in the next window', async () => {
    h.clock.set('2030-01-02T10:00:00Z');
    const t = await fundedAccount(h);
    await settings.put(t.accountId, { url: URL, budget_thresholds_percent: [50] });
    await budgets.putForKey(t.accountId, 'auto', { limit_dzd: '1.35', period: 'day' });
    await spend(t.key, 1_000, 500);
    await spend(t.key, 1_000, 500);
    expect(await evaluateTwiceConcurrently(t.accountId)).toHaveLength(1);
    // The next day: a new window, nothing spent in it yet, nothing to say.
    h.clock.set('2030-01-03T10:00:00Z');
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    await spend(t.key, 1_000, 500);
    await spend(t.key, 1_000, 500);
    const again = await evaluateTwiceConcurrently(t.accountId);
    expect(again).toHaveLength(1);
    expect((again[0]!.data as BudgetThresholdData).window_start).toBe('2030-01-03T00:00:00.000Z');
    const all = await eventsOf(t.accountId);
    expect(new Set(all.map((e) => e.id)).size).toBe(2);
  });
});

describe('balance below a threshold', () => {
  it('fires once, re-arms only once a credit lifts the balance above the threshold', async () => {
    h.clock.set('2030-01-05T10:00:00Z');
    const t = await fundedAccount(h, { creditDzd: 1n });
    await settings.put(t.accountId, {
      url: URL,
      balance_below_dzd: '0.5',
      budget_thresholds_percent: [],
    });
    await spend(t.key, 1_000, 500); // 0.55 left
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    await spend(t.key, 1_000, 100); // 0.34 left
    const low = await evaluateTwiceConcurrently(t.accountId);
    expect(low).toHaveLength(1);
    expect(low[0]!.data).toMatchObject({
      balance_micro_dzd: '340000',
      threshold_micro_dzd: '500000',
    });
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    // A credit that leaves the balance below the threshold re-arms nothing.
    h.clock.advance(1_000);
    await ledger.credit({ accountId: t.accountId, amountMicroDzd: 10_000n, reference: 'small' });
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    // One that lifts it above: the next fall is a new alert.
    await ledger.credit({ accountId: t.accountId, amountMicroDzd: 1_000_000n, reference: 'top' });
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    expect((await settingsOf(t.accountId)).balanceLowEpisode).toBe(1);
    await spend(t.key, 1_000, 500);
    await spend(t.key, 1_000, 500); // 1.35 − 0.9 = 0.45 left
    const again = await evaluateTwiceConcurrently(t.accountId);
    expect(again).toHaveLength(1);
    expect(again[0]!.id).not.toBe(low[0]!.id);
    expect(await eventsOf(t.accountId)).toHaveLength(2);
  });
});

describe('balance below a threshold, with requests in flight', () => {
  it('is not re-armed by a hold that settles for less than it reserved', async () => {
    h.clock.set('2030-01-06T10:00:00Z');
    const t = await fundedAccount(h, { creditDzd: 1n });
    await settings.put(t.accountId, {
      url: URL,
      balance_below_dzd: '0.8',
      budget_thresholds_percent: [],
    });
    const held = await spend(t.key, -1, 0); // 0.45 held: 0.55 available
    expect(await evaluateTwiceConcurrently(t.accountId)).toHaveLength(1);
    // It settles at no cost: 1 DZD available again, but no money came in.
    h.clock.advance(1_000);
    await ledger.settleHold(held, { inputTokens: 0, outputTokens: 0 });
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    expect((await settingsOf(t.accountId)).balanceLowEpisode).toBe(0);
    // The next request in flight is the same episode: no second alert.
    await spend(t.key, -1, 0);
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    expect(await eventsOf(t.accountId)).toHaveLength(1);
  });
});

describe('projected exhaustion', () => {
  it('fires when the balance lasts fewer hours than set at the last hour’s spend, once a day', async () => {
    h.clock.set('2030-01-07T10:00:00Z');
    const t = await fundedAccount(h, { creditDzd: 10n });
    await settings.put(t.accountId, {
      url: URL,
      exhaustion_hours: 24,
      budget_thresholds_percent: [],
    });
    await spend(t.key, 1_000, 500); // 0.45 an hour; 9.55 left: 21.2 hours
    const fired = await evaluateTwiceConcurrently(t.accountId);
    expect(fired).toHaveLength(1);
    expect(fired[0]!.data).toMatchObject({
      spend_rate_micro_dzd_per_hour: '450000',
      balance_micro_dzd: '9550000',
      projected_hours: 21.222,
      threshold_hours: 24,
    });
    h.clock.advance(30 * 60_000);
    await spend(t.key, 1_000, 500);
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
    // Over an hour later, nothing spent since: no rate, no projection.
    h.clock.advance(2 * 3_600_000);
    expect(await evaluateTwiceConcurrently(t.accountId)).toEqual([]);
  });
});

describe('the loop and the outbox', () => {
  const route = { exchange: 'test.events', routingKey: 'account.alert' };
  const bus = (publish: MessageBus['publish']) => ({ publish }) as unknown as MessageBus;

  it('claims each account once per interval and publishes each event once, after the broker confirms', async () => {
    h.clock.set('2030-01-09T10:00:00Z');
    const t = await fundedAccount(h, { creditDzd: 1n });
    await settings.put(t.accountId, { url: URL, balance_below_dzd: '5' });
    const sent: unknown[] = [];
    let brokerUp = false;
    const outbox = new AlertOutbox(
      repositories[0],
      h.keyring,
      bus(async (_to, body) => {
        if (!brokerUp) throw new Error('broker down');
        sent.push(body);
      }),
      route,
    );
    const engine = new AlertEngine({
      repository: repositories[0],
      keyring: h.keyring,
      evaluator: evaluators[0],
      outbox,
      intervalMs: 15_000,
      batchSize: 10_000,
      clock: h.clock.now,
    });
    const errors: string[] = [];
    const failing = new AlertEngine({
      ...{ repository: repositories[1], keyring: h.keyring, evaluator: evaluators[1], outbox },
      ...{ intervalMs: 15_000, batchSize: 10_000, clock: h.clock.now },
      onError: (_error, step) => errors.push(step),
    });
    await failing.tick();
    expect(errors).toEqual(['publish']);
    expect(sent).toEqual([]);
    // Evaluated within the interval: not claimed again.
    expect(await engine.evaluateBatch()).toEqual([]);
    brokerUp = true;
    await engine.tick();
    const mine = sent
      .map((body) => parseEnvelope('account.alert', body).payload)
      .filter((alert) => alert.accountId === t.accountId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ type: 'balance.low', webhookUrl: URL });
    expect(mine[0]!.eventId).toBe(mine[0]!.data.event_id);
    const before = sent.length;
    await engine.tick();
    expect(sent).toHaveLength(before);
  });

  it('drops the events of an account whose alerts were removed before they were published', async () => {
    h.clock.set('2030-01-10T10:00:00Z');
    const t = await fundedAccount(h, { creditDzd: 1n });
    await settings.put(t.accountId, { url: URL, balance_below_dzd: '5' });
    expect(await evaluateTwiceConcurrently(t.accountId)).toHaveLength(1);
    await settings.remove(t.accountId);
    const sent: unknown[] = [];
    const outbox = new AlertOutbox(
      repositories[0],
      h.keyring,
      bus(async (_to, body) => void sent.push(body)),
      route,
    );
    const result = await outbox.publishPending(10_000);
    expect(result.dropped).toBeGreaterThanOrEqual(1);
    expect(
      sent.filter((body) => parseEnvelope('account.alert', body).payload.accountId === t.accountId),
    ).toEqual([]);
  });

  it('sets aside an event that can never be sent instead of blocking every later one', async () => {
    h.clock.set('2030-01-11T10:00:00Z');
    const broken = await fundedAccount(h, { creditDzd: 1n });
    const healthy = await fundedAccount(h, { creditDzd: 1n });
    for (const t of [broken, healthy]) {
      await settings.put(t.accountId, { url: URL, balance_below_dzd: '5' });
    }
    const [first] = await evaluateTwiceConcurrently(broken.accountId);
    h.clock.advance(1_000);
    const [second] = await evaluateTwiceConcurrently(healthy.accountId);
    // The oldest pending event's sealed URL no longer opens (e.g. a retired key version).
    await h.sql.query(
      `UPDATE alert_settings SET url_tag = decode(repeat('00', 16), 'hex') WHERE account_id = $1`,
      [broken.accountId],
    );
    const sent: unknown[] = [];
    const outbox = new AlertOutbox(
      repositories[0],
      h.keyring,
      bus(async (_to, body) => void sent.push(body)),
      route,
    );
    const result = await outbox.publishPending(10_000);
    expect(result.undeliverable).toContainEqual({
      eventId: first!.id,
      reason: 'settings_unreadable',
    });
    const ids = sent.map((body) => parseEnvelope('account.alert', body).payload.eventId);
    expect(ids).toContain(second!.id);
    expect(ids).not.toContain(first!.id);
    // Set aside once, not tried at every tick.
    expect((await outbox.publishPending(10_000)).undeliverable).toEqual([]);
  });
});
