import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BudgetView } from '@gateway/contracts';
import {
  CHAT_MODEL,
  errorOf,
  rawRequest,
  settledHolds,
  startAbuseStack,
  type AbuseStack,
  type RawAnswer,
} from './abuse-stack.js';
import { fundAccount } from '@gateway/testing';

/*
 * Budgets enforced across the deployed shape (billing, dispatcher,
 * worker and two edge replicas as processes, real PostgreSQL and RabbitMQ). Budgets are set
 * through edge's operator API. Every way a hold ends must give its budget share back: a
 * settlement, a cancelled stream, an expiry, a refund of an answer nobody read.
 */

/** Billing releases a hold never marked published this long after admission (short here). */
const PUBLISH_GRACE_MS = 8_000;
const SWEEP_INTERVAL_MS = 500;

let stack: AbuseStack;

beforeAll(async () => {
  stack = await startAbuseStack({
    edgeReplicas: 2,
    billingEnv: {
      HOLD_PUBLISH_GRACE_MS: String(PUBLISH_GRACE_MS),
      HOLD_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
    },
    // Every admitted job of the race runs at once (the default prefetch is 8).
    workerEnv: { JOB_PREFETCH: '64' },
    // 200 admissions queue on one account's balance row: none may time out at edge.
    // A running job's hold is marked within 2 s, well inside the short grace.
    edgeEnv: { BILLING_TIMEOUT_MS: '30000', HOLD_PUBLISH_MARK_DELAY_MS: '2000' },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

afterEach(() => {
  stack.node.setOptions({ firstTokenLatencyMs: 20, tokensPerSecond: 500 });
});

const chat = (extra: Record<string, unknown> = {}) => ({
  model: CHAT_MODEL,
  messages: [{ role: 'user', content: 'How much is left?' }],
  max_tokens: 8,
  ...extra,
});

/** A chat request to edge replica `edge` (0 or 1). */
const post = (apiKey: string, body: unknown, edge = 0): Promise<RawAnswer> =>
  rawRequest(stack.edges[edge]!.port, {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    timeoutMs: 60_000,
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newAccount(): Promise<{ accountId: string; apiKey: string }> {
  const name = `budget-${randomUUID()}`;
  return fundAccount(stack.operator, {
    name,
    keyName: 'main',
    creditDzd: 1_000,
    credit: { reference: name, idempotencyKey: name },
    rateLimitPerMinute: 100_000,
  });
}

/**
 * The hold edge places for `body` (its worst case: the prompt tokens edge counts and
 * max_tokens at the model's prices), read from one answered request before any budget exists.
 */
async function holdOf(account: { accountId: string; apiKey: string }, body: unknown) {
  const answer = await post(account.apiKey, body);
  expect(answer.status).toBe(200);
  expect(await settledHolds(stack)).toBe(0);
  const rows = await stack.billingQuery<{ amount: string }>(
    'SELECT amount_micro_dzd AS amount FROM holds WHERE account_id = $1',
    [account.accountId],
  );
  expect(rows).toHaveLength(1);
  return BigInt(rows[0]!.amount);
}

const budgetPath = (accountId: string) => `/accounts/${accountId}/api-keys/main/budget`;

/**
 * A budget of `limitMicroDzd` on the account's key `main`: `total` unless a test needs a window
 * that resets (`week`: a run straddling Monday 00:00 UTC is the only one whose window rolls).
 */
async function putBudget(
  accountId: string,
  limitMicroDzd: bigint,
  period: 'week' | 'total' = 'total',
): Promise<BudgetView> {
  const limit = { limit_dzd: Number(limitMicroDzd) / 1e6, period };
  const put = await stack.admin('PUT', budgetPath(accountId), limit);
  expect([put.status, put.body]).toEqual([200, expect.any(String)]);
  const view = JSON.parse(put.body) as BudgetView;
  expect(view.limit_micro_dzd).toBe(limitMicroDzd.toString());
  return view;
}

async function budgetOf(accountId: string): Promise<BudgetView> {
  const answer = await stack.admin('GET', budgetPath(accountId));
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as BudgetView;
}

/** What the account's holds admitted under the budget were charged, refunds deducted. */
async function chargedSince(accountId: string, windowStart: string): Promise<bigint> {
  const rows = await stack.billingQuery<{ charged: string }>(
    `SELECT COALESCE(sum(settled_amount_micro_dzd), 0) AS charged FROM holds
      WHERE account_id = $1 AND created_at >= $2 AND status = 'settled' AND refunded_at IS NULL`,
    [accountId, windowStart],
  );
  return BigInt(rows[0]!.charged);
}

/** Nothing pending, the budget holds nothing back, the ledger balances. */
async function allEnded(accountId: string): Promise<BudgetView> {
  expect(await settledHolds(stack)).toBe(0);
  const budget = await budgetOf(accountId);
  expect(budget.reserved_micro_dzd).toBe('0');
  expect(await stack.ledgerCheck()).toEqual({ ok: true, violations: [] });
  return budget;
}

function expectBudgetRefusal(answer: RawAnswer, budget: BudgetView) {
  const error = errorOf(answer);
  expect([answer.status, error.code]).toEqual([402, 'budget_exhausted']);
  expect(error.message).toContain("API key 'main'");
  expect(error.message).toContain(
    budget.resets_at === null ? 'It does not reset.' : `It resets at ${budget.resets_at}.`,
  );
}

describe('budgets across two edge replicas', () => {
  it('admits exactly the requests the budget has room for, out of 200 at once', async () => {
    const account = await newAccount();
    const body = chat();
    const hold = await holdOf(account, body);
    const ROOM = 20;
    const TOTAL = 200;
    // Room for ROOM holds and not one more µDZD's worth of the next.
    const budget = await putBudget(account.accountId, hold * BigInt(ROOM + 1) - 1n, 'week');
    expect(budget.resets_at).not.toBeNull();
    // Slow enough that every admission happens while the first holds are pending.
    stack.node.setOptions({ firstTokenLatencyMs: 5_000 });
    const answers = await Promise.all(
      Array.from({ length: TOTAL }, (_, i) =>
        post(account.apiKey, body, i % 2).then((answer) => ({ answer, edge: i % 2 })),
      ),
    );
    const admitted = answers.filter(({ answer }) => answer.status === 200);
    const refused = answers.filter(({ answer }) => answer.status === 402);
    expect([admitted.length, refused.length]).toEqual([ROOM, TOTAL - ROOM]);
    for (const { answer } of refused) expectBudgetRefusal(answer, budget);
    // Both replicas were refused too: they checked one budget (state per replica would have
    // admitted ROOM on each). Which replica's admissions reached billing first is a matter of
    // timing, so the admitted ones may all be one replica's.
    for (const edge of [0, 1]) expect(refused.some((a) => a.edge === edge)).toBe(true);
    // Every refusal came while the admitted requests were still running.
    const lastRefusalMs = Math.max(...refused.map(({ answer }) => answer.elapsedMs));
    const firstAnswerMs = Math.min(...admitted.map(({ answer }) => answer.elapsedMs));
    expect(lastRefusalMs).toBeLessThan(firstAnswerMs);

    const after = await allEnded(account.accountId);
    const costs = admitted.map(({ answer }) => {
      const { _service } = JSON.parse(answer.body) as { _service: { cost_dzd: number } };
      return BigInt(Math.round(_service.cost_dzd * 1e6));
    });
    const answeredMicroDzd = costs.reduce((sum, cost) => sum + cost, 0n);
    expect(after.spent_micro_dzd).toBe(answeredMicroDzd.toString());
    expect(await chargedSince(account.accountId, budget.window_start)).toBe(answeredMicroDzd);
    expect(answeredMicroDzd).toBeLessThanOrEqual(BigInt(budget.limit_micro_dzd));
  }, 120_000);

  it('gives a cancelled stream’s share back at once', async () => {
    const account = await newAccount();
    const body = chat({ stream: true });
    const hold = await holdOf(account, body);
    // Room for one hold; two do not fit. What the cancelled stream is charged (its prompt and
    // a token or two) leaves room for the next one.
    const budget = await putBudget(account.accountId, hold + hold / 2n);
    stack.node.setOptions({ firstTokenLatencyMs: 0, tokensPerSecond: 1 });
    const first = openStream(account.apiKey, body, 0);
    await first.firstContent;
    expectBudgetRefusal(await post(account.apiKey, body, 1), budget);

    const abortedAt = performance.now();
    first.abort();
    let next: Stream | undefined;
    while (next === undefined && performance.now() - abortedAt < 10_000) {
      const attempt = openStream(account.apiKey, body, 1);
      const status = await attempt.status;
      if (status === 200) next = attempt;
      else expectBudgetRefusal(await attempt.refusal, budget);
    }
    const admittedAfterMs = performance.now() - abortedAt;
    next?.abort();
    expect(next).toBeDefined();
    // Before the cancelled stream is over the node's 6 s answer, unless released at once.
    expect(admittedAfterMs).toBeLessThan(2_000);

    const after = await allEnded(account.accountId);
    expect(after.spent_micro_dzd).toBe(
      (await chargedSince(account.accountId, budget.window_start)).toString(),
    );
  }, 60_000);

  it('gives an expired hold’s share back when the sweeper releases it, not before', async () => {
    const account = await newAccount();
    const body = chat();
    const hold = await holdOf(account, body);
    // What an edge that died between admission and publishing leaves: a hold nobody publishes.
    const orphan = (holdId: string) =>
      stack.billingAsEdge<{ hold: { amountMicroDzd: string } }>('POST', '/admissions', {
        authorization: `Bearer ${account.apiKey}`,
        holdId,
        model: CHAT_MODEL,
        estimate: { inputTokens: 1, maxOutputTokens: 8, choices: 1 },
        priority: false,
      });
    // Its size, from one placed before the budget (it expires too, counted by no budget).
    const orphanHold = BigInt((await orphan(`hold-${randomUUID()}`)).hold.amountMicroDzd);
    // Each fits alone, not both together.
    const budget = await putBudget(account.accountId, hold + orphanHold - 1n);
    const orphanId = `hold-${randomUUID()}`;
    await orphan(orphanId);
    const placedAt = performance.now();
    expect((await budgetOf(account.accountId)).reserved_micro_dzd).toBe(orphanHold.toString());

    let attempts = 1;
    let answer = await post(account.apiKey, body, 1);
    while (answer.status === 402 && performance.now() - placedAt < PUBLISH_GRACE_MS + 10_000) {
      expectBudgetRefusal(answer, budget);
      await sleep(250);
      attempts += 1;
      answer = await post(account.apiKey, body, attempts % 2);
    }
    const admittedAfterMs = performance.now() - placedAt;
    expect(answer.status).toBe(200);
    expect(admittedAfterMs).toBeGreaterThanOrEqual(PUBLISH_GRACE_MS);
    const [row] = await stack.billingQuery<{ status: string }>(
      'SELECT status FROM holds WHERE id = $1',
      [orphanId],
    );
    expect(row?.status).toBe('expired');

    const after = await allEnded(account.accountId);
    // The expired hold cost nothing: spent is the answered request's cost alone.
    expect(after.spent_micro_dzd).toBe(
      (await chargedSince(account.accountId, budget.window_start)).toString(),
    );
    expect(BigInt(after.spent_micro_dzd)).toBeGreaterThan(0n);
  }, 60_000);

  // Last: it kills the second edge replica.
  it('takes an answer nobody could read out of the window’s spend when it is refunded', async () => {
    const account = await newAccount();
    const body = chat();
    const hold = await holdOf(account, body);
    const budget = await putBudget(account.accountId, hold * 10n);
    stack.node.setOptions({ firstTokenLatencyMs: 3_000 });
    const calls = () =>
      stack.node.requests().filter((r) => r.path.endsWith('/chat/completions')).length;
    const callsBefore = calls();
    // The client's connection dies with the edge: the failed request is expected.
    const lost = post(account.apiKey, body, 1).catch(() => undefined);
    const deadline = performance.now() + 10_000;
    while (calls() === callsBefore && performance.now() < deadline) await sleep(50);
    expect(calls()).toBe(callsBefore + 1);
    // The edge dies while the node works: its reply queue goes with its connection.
    await stack.edges[1]!.stop('SIGKILL');
    await lost;

    const holdsOf = () =>
      stack.billingQuery<{ settled: string | null; refunded: boolean }>(
        `SELECT settled_amount_micro_dzd AS settled, refunded_at IS NOT NULL AS refunded
           FROM holds WHERE account_id = $1 AND created_at >= $2`,
        [account.accountId, budget.window_start],
      );
    // Edge's reply queue outlives its connection (a reconnecting edge still gets its replies);
    // a reply unread for 30 s (REPLY_UNREAD_TTL_MS) goes to billing, which refunds it.
    const refundBy = performance.now() + 60_000;
    while (!(await holdsOf())[0]?.refunded && performance.now() < refundBy) await sleep(200);
    const [refunded] = await holdsOf();
    expect(refunded?.refunded).toBe(true);
    // It was charged (the worker settled it), then refunded: the window spent nothing.
    expect(BigInt(refunded?.settled ?? 0)).toBeGreaterThan(0n);
    const after = await allEnded(account.accountId);
    expect(after.spent_micro_dzd).toBe('0');
  }, 120_000);
});

interface Stream {
  /** The response's status (200 once admitted: edge streams only after admission). */
  status: Promise<number>;
  /** The first chunk with generated text. */
  firstContent: Promise<void>;
  /** A refusal's whole answer (for a status other than 200). */
  refusal: Promise<RawAnswer>;
  /** Closes the connection, as a client that stops reading does. */
  abort(): void;
}

/** A streamed chat request the test can abort mid-answer. */
function openStream(apiKey: string, body: unknown, edge: number): Stream {
  const startedAt = performance.now();
  let onStatus!: (status: number) => void;
  let onContent!: () => void;
  let onRefusal!: (answer: RawAnswer) => void;
  const status = new Promise<number>((resolve) => (onStatus = resolve));
  const firstContent = new Promise<void>((resolve) => (onContent = resolve));
  const refusal = new Promise<RawAnswer>((resolve) => (onRefusal = resolve));
  const req = httpRequest(
    {
      host: '127.0.0.1',
      port: stack.edges[edge]!.port,
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      agent: false,
    },
    (res) => {
      onStatus(res.statusCode ?? 0);
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (/"content":"[^"]/.test(text)) onContent();
      });
      res.on('end', () =>
        onRefusal({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: text,
          elapsedMs: performance.now() - startedAt,
        }),
      );
      res.on('error', () => {});
    },
  );
  req.on('error', () => {});
  req.end(JSON.stringify(body));
  return { status, firstContent, refusal, abort: () => req.destroy() };
}
