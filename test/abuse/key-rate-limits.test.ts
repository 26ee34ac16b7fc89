import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { KeyInfo, KeyRateLimitView } from '@gateway/contracts';
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
 * A key's own requests and tokens per minute, beside the account's, enforced
 * across the deployed shape (billing, worker, dispatcher and two edge replicas as processes, real
 * PostgreSQL and RabbitMQ), set through edge's operator API; `X-RateLimit-*` report the tightest.
 */

let stack: AbuseStack;

beforeAll(async () => {
  stack = await startAbuseStack({
    edgeReplicas: 2,
    workerEnv: { JOB_PREFETCH: '64' },
    edgeEnv: { BILLING_TIMEOUT_MS: '30000' },
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
  messages: [{ role: 'user', content: 'Count my tokens.' }],
  max_tokens: 8,
  ...extra,
});

const call = (apiKey: string, method: string, path: string, body?: unknown, edge = 0) =>
  rawRequest(stack.edges[edge]!.port, {
    method,
    path,
    headers: {
      Authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    timeoutMs: 60_000,
  });

const post = (apiKey: string, body: unknown, edge = 0): Promise<RawAnswer> =>
  call(apiKey, 'POST', '/v1/chat/completions', body, edge);

const header = (answer: RawAnswer, name: string) => {
  const value = answer.headers[name.toLowerCase()];
  return value === undefined ? undefined : Number(value);
};

async function newAccount(): Promise<{ accountId: string; apiKey: string }> {
  const name = `key-limits-${randomUUID()}`;
  return fundAccount(stack.operator, {
    name,
    keyName: 'main',
    creditDzd: 1_000,
    credit: { reference: name, idempotencyKey: name },
    rateLimitPerMinute: 100_000,
  });
}

const limitPath = (accountId: string) => `/accounts/${accountId}/api-keys/main/rate-limit`;

async function putLimits(accountId: string, limits: Record<string, number | null>) {
  const put = await stack.admin('PUT', limitPath(accountId), limits);
  expect(put.status).toBe(200);
  return JSON.parse(put.body) as KeyRateLimitView;
}

/** Waits for a fresh minute when the current one has less than `needMs` left. */
async function roomInWindow(needMs: number): Promise<void> {
  const leftMs = 60_000 - (Date.now() % 60_000);
  if (leftMs < needMs) await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
}

describe('per-key rate limits across two edge replicas', () => {
  it("counts a key's requests per minute exactly, beside the account's, and reports the tightest", async () => {
    const account = await newAccount();
    const view = await putLimits(account.accountId, { requests_per_minute: 20 });
    expect(view).toEqual({
      object: 'rate_limit',
      applies_to: 'api_key',
      owner: 'main',
      requests_per_minute: 20,
      tokens_per_minute: null,
    });
    await roomInWindow(20_000);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => post(account.apiKey, chat(), i % 2)),
    );
    const ok = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect([ok.length, refused.length]).toEqual([20, 40]);
    // Each admitted request had its own place in the key's window (not the account's 100 000).
    expect(ok.map((answer) => header(answer, 'X-RateLimit-Limit'))).toEqual(Array(20).fill(20));
    const remaining = ok.map((answer) => header(answer, 'X-RateLimit-Remaining'));
    expect(remaining.sort((a, b) => a! - b!)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const answer of refused) {
      expect(errorOf(answer)).toMatchObject({
        code: 'rate_limit_exceeded',
        message: 'API key rate limit reached',
      });
      expect(header(answer, 'X-RateLimit-Remaining')).toBe(0);
      expect(header(answer, 'Retry-After')).toBeGreaterThanOrEqual(1);
    }
    // Routes that place no hold count in the key's window too.
    const models = await call(account.apiKey, 'GET', '/v1/models');
    expect(models.status).toBe(429);
    // Removing the key's limits leaves the account's.
    expect((await stack.admin('DELETE', limitPath(account.accountId))).status).toBe(204);
    const after = await post(account.apiKey, chat(), 1);
    expect(after.status).toBe(200);
    expect(header(after, 'X-RateLimit-Limit')).toBe(100_000);
    expect(await settledHolds(stack)).toBe(0);
  }, 120_000);

  it("holds a key's tokens per minute exactly under a burst, and gives back what a request did not use", async () => {
    // The tokens one request reserves (edge's prompt count plus max_tokens), from a probe.
    const probe = await newAccount();
    await putLimits(probe.accountId, { tokens_per_minute: 1_000_000 });
    expect((await post(probe.apiKey, chat())).status).toBe(200);
    const [probed] = await reservations(probe.accountId);
    const perRequest = probed!;
    const limit = 3 * perRequest + Math.floor(perRequest / 2);

    const account = await newAccount();
    await putLimits(account.accountId, { tokens_per_minute: limit });
    await roomInWindow(40_000);
    // Slow answers: no request of the burst settles (and gives tokens back) before all are in.
    stack.node.setOptions({ firstTokenLatencyMs: 3_000, tokensPerSecond: 500 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(account.apiKey, chat(), i % 2)),
    );
    const ok = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect([ok.length, refused.length]).toEqual([3, 9]);
    expect(await reservations(account.accountId)).toEqual([perRequest, perRequest, perRequest]);
    for (const answer of refused) {
      expect(errorOf(answer).code).toBe('rate_limit_exceeded');
      expect(errorOf(answer).message).toBe(
        `API key rate limit reached: ${3 * perRequest} of ${limit} tokens per minute used, ` +
          `and this request needs up to ${perRequest}`,
      );
      expect(header(answer, 'X-RateLimit-Limit-Tokens')).toBe(limit);
      expect(header(answer, 'X-RateLimit-Remaining-Tokens')).toBe(limit - 3 * perRequest);
      expect(header(answer, 'Retry-After')).toBeGreaterThanOrEqual(1);
    }
    // Every answered request reported its tokens; what it did not use came back to the window.
    expect(await settledHolds(stack)).toBe(0);
    const used = await stack.billingQuery<{ tokens: string }>(
      `SELECT prompt_tokens + completion_tokens AS tokens FROM usage_records
        WHERE account_id = $1`,
      [account.accountId],
    );
    expect(used).toHaveLength(3);
    const usedTokens = used.reduce((sum, row) => sum + Math.min(Number(row.tokens), perRequest), 0);
    expect(usedTokens).toBeLessThan(3 * perRequest);
    const info = await call(account.apiKey, 'GET', '/v1/key');
    expect(info.status).toBe(200);
    const { rate_limit: rateLimit } = JSON.parse(info.body) as KeyInfo;
    expect(rateLimit.tokens).toMatchObject({
      limit_per_minute: limit,
      remaining: limit - usedTokens,
    });
  }, 120_000);

  it('refuses a request larger than the whole tokens-per-minute limit, saying so', async () => {
    const account = await newAccount();
    await putLimits(account.accountId, { requests_per_minute: 50, tokens_per_minute: 5 });
    const answer = await post(account.apiKey, chat());
    expect(answer.status).toBe(429);
    expect(errorOf(answer).message).toMatch(
      /^API key rate limit: this request needs up to \d+ tokens, more than its limit of 5 tokens per minute; lower max_tokens \(or n\)$/,
    );
    // Both limits apply; the request limit is the tightest requests window.
    expect(header(answer, 'X-RateLimit-Limit')).toBe(50);
    const rejected = await stack.admin('PUT', limitPath(account.accountId), {
      requests_per_minute: 0,
    });
    expect(rejected.status).toBe(400);
    const unknown = await stack.admin(
      'PUT',
      `/accounts/${account.accountId}/api-keys/nobody/rate-limit`,
      { requests_per_minute: 5 },
    );
    expect(unknown.status).toBe(404);
  }, 60_000);
});

/** The tokens each of the account's holds counted against tokens-per-minute windows. */
async function reservations(accountId: string): Promise<number[]> {
  const rows = await stack.billingQuery<{ tokens: string }>(
    'SELECT rate_tokens AS tokens FROM holds WHERE account_id = $1 AND rate_tokens IS NOT NULL',
    [accountId],
  );
  return rows.map((row) => Number(row.tokens));
}
