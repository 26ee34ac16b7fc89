import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { AlertSettingsView, AlertWebhookBody } from '@gateway/contracts';
import {
  startReceiver,
  type ReceivedRequest,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import {
  createTestCertificates,
  type TestCertificates,
} from '../../services/dispatcher/src/testing/test-ca.suite.js';
import {
  CHAT_MODEL,
  rawRequest,
  settledHolds,
  startAbuseStack,
  type AbuseStack,
} from '../abuse/abuse-stack.js';
import { loopbackWebhookEnv } from '../support/loopback-webhooks.js';
import { fundAccount, waitFor } from '@gateway/testing';

/*
 * Account alerts end to end, every hop real: edge, billing (its alerts loop), the worker
 * and the dispatcher as processes, PostgreSQL, RabbitMQ, and an HTTPS receiver trusting only the
 * test CA. Alerts are set through edge's operator API; each arrives once per window and
 * threshold, verifies with the `standardwebhooks` package, and a receiver that is down gets
 * the retry schedule (shortened here) and then no more.
 */

/** The retry schedule (delay before each attempt) given to the dispatcher, no jitter. */
const SCHEDULE_MS = [0, 400, 800, 1_200];
/** Evaluator ticks within which an alert must have been raised and delivered. */
const ALERT_WAIT_MS = 20_000;

let certs: TestCertificates;
let receiver: Receiver;
let stack: AbuseStack;

beforeAll(async () => {
  certs = createTestCertificates();
  receiver = await startReceiver(certs);
  stack = await startAbuseStack({
    billingEnv: { ALERT_EVALUATE_INTERVAL_MS: '200' },
    ...loopbackWebhookEnv(certs, {
      RETRY_SCHEDULE_A_MS: SCHEDULE_MS.join(','),
      RETRY_JITTER_RATIO: '0',
    }),
  });
  // Every answer is cut at max_tokens: each request costs exactly its hold.
  stack.node.setOptions({ answerTokensMin: 24, answerTokensMax: 24 });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  certs?.remove();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hookUrl = (path: string) => `https://127.0.0.1:${receiver.port}${path}`;

async function newAccount(creditDzd = 1_000) {
  const name = `alerts-${randomUUID()}`;
  return fundAccount(stack.operator, {
    name,
    keyName: 'main',
    creditDzd,
    credit: { reference: name, idempotencyKey: name },
    rateLimitPerMinute: 100_000,
  });
}

async function admin<T>(method: string, route: string, body?: unknown, status = 200): Promise<T> {
  const answer = await stack.admin(method, route, body);
  expect([answer.status, answer.body]).toEqual([status, expect.any(String)]);
  return (answer.body ? JSON.parse(answer.body) : undefined) as T;
}

async function chat(apiKey: string): Promise<number> {
  const answer = await rawRequest(stack.edgePort, {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model: CHAT_MODEL,
      messages: [{ role: 'user', content: 'Tell me when the money runs low.' }],
      max_tokens: 8,
    }),
    timeoutMs: 30_000,
  });
  await settledHolds(stack);
  return answer.status;
}

/** The one request's hold and what it settled at, µDZD. */
async function lastHold(accountId: string): Promise<{ amount: bigint; settled: bigint }> {
  const rows = await stack.billingQuery<{ amount: string; settled: string }>(
    `SELECT amount_micro_dzd AS amount, settled_amount_micro_dzd AS settled FROM holds
      WHERE account_id = $1 ORDER BY created_at DESC LIMIT 1`,
    [accountId],
  );
  return { amount: BigInt(rows[0]!.amount), settled: BigInt(rows[0]!.settled) };
}

async function secretsOf(accountId: string): Promise<string[]> {
  const list = await admin<{ secrets: { secret: string }[] }>(
    'GET',
    `/accounts/${accountId}/webhook-secrets`,
  );
  return list.secrets.map((s) => s.secret);
}

/** Verified with the `standardwebhooks` package (throws otherwise), then parsed. */
function verified(request: ReceivedRequest, secret: string): AlertWebhookBody {
  const body = request.body.toString('utf8');
  return new Webhook(secret).verify(body, request.headers as Record<string, string>) as never;
}

const dzd = (microDzd: bigint) => (Number(microDzd) / 1e6).toFixed(6);

interface Delivery {
  id: string;
  job_id: string;
  event_type: string;
  status: string;
  attempts: { status_code: number | null; outcome: string }[];
}
const deliveriesOf = async (accountId: string) =>
  (await admin<{ deliveries: Delivery[] }>('GET', `/accounts/${accountId}/webhook-deliveries`))
    .deliveries;

describe('account alerts as signed webhooks, end to end', () => {
  it('sends a budget’s 50, 80 and 100 % alerts once each, signed', async () => {
    const account = await newAccount();
    expect(await chat(account.apiKey)).toBe(200);
    const cost = await lastHold(account.accountId);
    const path = '/budget';
    const view = await admin<AlertSettingsView>('PUT', `/accounts/${account.accountId}/alerts`, {
      url: hookUrl(path),
    });
    expect(view).toMatchObject({ budget_thresholds_percent: [50, 80, 100], enabled: true });
    // A hold is the request's worst case (edge counts a few more prompt tokens than the node
    // reports), so settled spend alone never fills a budget that admission guards. Room for
    // exactly five requests: four settled costs and the fifth's hold. Over 50 % from the third,
    // 80 % from the fourth's hold; 100 % while the fifth is in flight (its reservation counts,
    // as admission counts it), slowed down so that an evaluation sees it. The sixth is refused.
    const limit = cost.settled * 4n + cost.amount;
    await admin('PUT', `/accounts/${account.accountId}/api-keys/main/budget`, {
      limit_dzd: dzd(limit),
      period: 'total',
    });
    for (let i = 0; i < 4; i += 1) expect(await chat(account.apiKey)).toBe(200);
    stack.node.setOptions({ firstTokenLatencyMs: 2_000 });
    try {
      expect(await chat(account.apiKey)).toBe(200);
    } finally {
      stack.node.setOptions({ firstTokenLatencyMs: 20 });
    }
    expect(await chat(account.apiKey)).toBe(402);

    await waitFor(
      () => (receiver.requestsTo(path).length >= 3 ? true : undefined),
      ALERT_WAIT_MS,
      'three budget alerts',
    );
    // Many evaluations later, still three.
    await sleep(1_500);
    const requests = receiver.requestsTo(path);
    expect(requests).toHaveLength(3);
    const [secret] = await secretsOf(account.accountId);
    const bodies = requests.map((request) => verified(request, secret!));
    expect(bodies.map((b) => b.type)).toEqual(Array(3).fill('budget.threshold'));
    const byThreshold = bodies
      .map((b) => b.data as Record<string, unknown>)
      .sort((a, b) => Number(a.threshold_percent) - Number(b.threshold_percent));
    expect(byThreshold.map((d) => d.threshold_percent)).toEqual([50, 80, 100]);
    expect(byThreshold[2]).toMatchObject({
      account_id: account.accountId,
      budget: { applies_to: 'api_key', owner: 'main', period: 'total' },
      used_micro_dzd: limit.toString(),
      limit_micro_dzd: limit.toString(),
      resets_at: null,
    });
    const ids = requests.map((r) => String(r.headers['webhook-id']));
    expect(new Set(ids).size).toBe(3);
    for (const [i, request] of requests.entries()) {
      expect(ids[i]).toBe((bodies[i]!.data as { event_id: string }).event_id);
      expect(() => verified(request, 'whsec_' + Buffer.alloc(32).toString('base64'))).toThrow();
    }
    // The delivery log lists them with their type, the alert id in place of a job id.
    const listed = await deliveriesOf(account.accountId);
    const alerts = listed.filter((d) => d.event_type === 'budget.threshold');
    expect(alerts.map((d) => d.job_id).sort()).toEqual([...ids].sort());
    expect(alerts.every((d) => d.status === 'delivered')).toBe(true);
  });

  it('sends the low-balance alert once, and again only after a credit re-armed it', async () => {
    const account = await newAccount(1);
    const path = '/balance';
    expect(await chat(account.apiKey)).toBe(200);
    const cost = await lastHold(account.accountId);
    // Below after one more request, not before.
    const threshold = 1_000_000n - cost.settled - cost.settled / 2n;
    await admin('PUT', `/accounts/${account.accountId}/alerts`, {
      url: hookUrl(path),
      balance_below_dzd: dzd(threshold),
      budget_thresholds_percent: [],
    });
    await sleep(600);
    expect(receiver.requestsTo(path)).toHaveLength(0);
    expect(await chat(account.apiKey)).toBe(200);
    await waitFor(() => receiver.requestsTo(path)[0], ALERT_WAIT_MS, 'a low-balance alert');
    await sleep(1_000);
    expect(receiver.requestsTo(path)).toHaveLength(1);

    // A credit lifts the balance back above: re-armed (seen by an evaluation), nothing sent.
    const credit = await stack.admin(
      'POST',
      `/accounts/${account.accountId}/credits`,
      { amount_dzd: dzd(cost.settled * 2n), reference: 'top-up' },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(credit.status).toBe(200);
    await waitFor(
      async () => {
        const rows = await stack.billingQuery<{ episode: number }>(
          'SELECT balance_low_episode AS episode FROM alert_settings WHERE account_id = $1',
          [account.accountId],
        );
        return rows[0]!.episode === 1 ? true : undefined;
      },
      ALERT_WAIT_MS,
      'the balance alert re-armed',
    );
    expect(receiver.requestsTo(path)).toHaveLength(1);
    expect(await chat(account.apiKey)).toBe(200);
    expect(await chat(account.apiKey)).toBe(200);
    await waitFor(
      () => (receiver.requestsTo(path).length >= 2 ? true : undefined),
      ALERT_WAIT_MS,
      'a second low-balance alert',
    );
    await sleep(1_000);
    const requests = receiver.requestsTo(path);
    expect(requests).toHaveLength(2);
    const [secret] = await secretsOf(account.accountId);
    const [first, second] = requests.map((r) => verified(r, secret!));
    expect(first!.type).toBe('balance.low');
    expect(first!.data).toMatchObject({ threshold_micro_dzd: threshold.toString() });
    expect(requests[0]!.headers['webhook-id']).not.toBe(requests[1]!.headers['webhook-id']);
    expect(second!.type).toBe('balance.low');
  });

  it('retries a receiver that is down on the schedule, then stops', async () => {
    const account = await newAccount(1);
    const path = '/down';
    receiver.setResponder(path, () => ({ status: 503 }));
    await admin('PUT', `/accounts/${account.accountId}/alerts`, {
      url: hookUrl(path),
      balance_below_dzd: 5,
    });
    await waitFor(
      () => (receiver.requestsTo(path).length >= SCHEDULE_MS.length ? true : undefined),
      ALERT_WAIT_MS,
      'every attempt',
    );
    await sleep(2_000);
    const attempts = receiver.requestsTo(path);
    expect(attempts).toHaveLength(SCHEDULE_MS.length);
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    // Each gap is the schedule's delay, give or take a dispatch tick and a loaded machine.
    for (let i = 1; i < attempts.length; i += 1) {
      const gapMs = attempts[i]!.atMs - attempts[i - 1]!.atMs;
      expect(gapMs).toBeGreaterThanOrEqual(SCHEDULE_MS[i]! - 20);
      expect(gapMs).toBeLessThan(SCHEDULE_MS[i]! + 1_500);
    }
    const [delivery] = (await deliveriesOf(account.accountId)).filter(
      (d) => d.event_type === 'balance.low',
    );
    expect(delivery).toMatchObject({ status: 'dropped' });
    expect(delivery!.attempts.map((a) => a.status_code)).toEqual(Array(4).fill(503));
  });
});
