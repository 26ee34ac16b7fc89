import { beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { bearer } from '../../services/edge/src/testing/edge.suite.js';
import { useRealStack } from '../../services/edge/src/testing/real-stack.suite.js';
import { clientToken, nowS } from '../../services/edge/src/testing/tokens.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/**
 * Usage records end to end: edge → RabbitMQ → the real worker → a stand-in node, with the real
 * billing. Every request that reached admission leaves one usage record when its hold ends,
 * with what it cost the ledger; `GET /v1/usage` and `GET /admin/v1/usage` sum them exactly.
 */

const MODEL = 'acme/usage-chat';
const OTHER_MODEL = 'acme/usage-chat-b';
const PRICES = { input_price_dzd_per_m: 1_000, output_price_dzd_per_m: 2_000 };
const stack = useRealStack(
  {
    [MODEL]: { kind: 'chat', ...PRICES, max_output_tokens: 256 },
    [OTHER_MODEL]: { kind: 'chat', ...PRICES, max_output_tokens: 256 },
  },
  { answerTokensMin: 5, answerTokensMax: 8 },
);
const messages = [{ role: 'user' as const, content: 'Say something short.' }];

interface UsageRecord {
  hold_id: string;
  request_id: string | null;
  account_id: string;
  api_key_name: string | null;
  scoped_token_id: string | null;
  endpoint: string | null;
  model: string;
  hold_status: string;
  outcome: string;
  prompt_tokens: string;
  completion_tokens: string;
  cost_micro_dzd: string;
  queue_latency_ms: string | null;
  generation_latency_ms: string | null;
  ended_at: Date;
}

/** Billing's database, read directly (one short connection: the stack drops it at the end). */
async function query<T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
  const db = new pg.Client({ connectionString: stack.billing.databaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(text, values)).rows;
  } finally {
    await db.end();
  }
}

async function recordsOf(accountId: string): Promise<UsageRecord[]> {
  return query<UsageRecord>(
    'SELECT * FROM usage_records WHERE account_id = $1 ORDER BY ended_at, hold_id',
    [accountId],
  );
}

/** What the ledger charged the account for its requests (settlement legs). */
async function settledMicroDzd(accountId: string): Promise<bigint> {
  const rows = await query<{ charged: string }>(
    `SELECT COALESCE(-SUM(e.amount_micro_dzd), 0)::text AS charged
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.kind = 'hold_settlement' AND e.account_id = $1`,
    [accountId],
  );
  return BigInt(rows[0]!.charged);
}

async function waitForRecords(accountId: string, count: number): Promise<UsageRecord[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const records = await recordsOf(accountId);
    if (records.length >= count || Date.now() > deadline) return records;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const dzd = (microDzd: bigint) => Number(microDzd) / 1e6;
const today = () => new Date().toISOString().slice(0, 10);
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

describe('a usage record per request', () => {
  let tenant: FundedAccount;
  beforeAll(async () => {
    tenant = await fundAccount(stack.billing.operator);
  });

  it('succeeded: endpoint, key, request id, tokens, latencies and the settled cost', async () => {
    const { data: completion, response } = await stack
      .client(tenant.apiKey)
      .chat.completions.create({ model: MODEL, messages })
      .withResponse();
    const [record] = await waitForRecords(tenant.accountId, 1);
    const service = (completion as unknown as { _service: { cost_dzd: number } })._service;
    expect(record).toMatchObject({
      request_id: response.headers.get('x-request-id'),
      api_key_name: 'auto',
      scoped_token_id: null,
      endpoint: 'chat.completions',
      model: MODEL,
      hold_status: 'settled',
      outcome: 'succeeded',
      prompt_tokens: String(completion.usage!.prompt_tokens),
      completion_tokens: String(completion.usage!.completion_tokens),
    });
    expect(dzd(BigInt(record!.cost_micro_dzd))).toBe(service.cost_dzd);
    expect(Number(record!.queue_latency_ms)).toBeGreaterThanOrEqual(0);
    expect(Number(record!.generation_latency_ms)).toBeGreaterThan(0);
  });

  it('failed: the node answers 5xx, the hold is voided, nothing charged', async () => {
    stack.node.setFault({ kind: 'status', status: 503 });
    try {
      await expect(
        stack.client(tenant.apiKey).chat.completions.create({ model: MODEL, messages }),
      ).rejects.toMatchObject({ status: 500 });
    } finally {
      stack.node.clearFault();
    }
    const records = await waitForRecords(tenant.accountId, 2);
    expect(records[1]).toMatchObject({
      hold_status: 'voided',
      outcome: 'failed',
      cost_micro_dzd: '0',
      prompt_tokens: '0',
      endpoint: 'chat.completions',
    });
  });

  it('cancelled: the client leaves mid-stream and pays for what was relayed', async () => {
    stack.node.setOptions({ tokensPerSecond: 20, answerTokensMin: 200, answerTokensMax: 200 });
    try {
      const controller = new AbortController();
      const stream = await stack
        .client(tenant.apiKey)
        .chat.completions.create(
          { model: MODEL, messages, stream: true },
          { signal: controller.signal },
        );
      let chunks = 0;
      try {
        for await (const chunk of stream) {
          if (chunk.choices.length > 0 && (chunks += 1) >= 5) controller.abort();
        }
      } catch {
        // The SDK may end the iteration with an abort error or quietly.
      }
      expect(chunks).toBeGreaterThanOrEqual(5);
    } finally {
      stack.node.setOptions({ tokensPerSecond: 500, answerTokensMin: 5, answerTokensMax: 8 });
    }
    const records = await waitForRecords(tenant.accountId, 3);
    expect(records[2]).toMatchObject({ hold_status: 'settled', outcome: 'cancelled' });
    expect(Number(records[2]!.completion_tokens)).toBeGreaterThan(0);
    expect(BigInt(records[2]!.cost_micro_dzd)).toBeGreaterThan(0n);
  });

  it('voided: the client leaves before any node accepted the request', async () => {
    stack.node.setFault({ kind: 'timeout' });
    const before = stack.node.requests().length;
    try {
      const controller = new AbortController();
      const pending = stack
        .client(tenant.apiKey)
        .chat.completions.create({ model: MODEL, messages }, { signal: controller.signal });
      const deadline = Date.now() + 5_000;
      while (stack.node.requests().length === before && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      controller.abort();
      await expect(pending).rejects.toThrow();
      const records = await waitForRecords(tenant.accountId, 4);
      expect(records[3]).toMatchObject({
        hold_status: 'voided',
        outcome: 'cancelled',
        cost_micro_dzd: '0',
      });
    } finally {
      stack.node.clearFault();
    }
  });

  it('reconciles with the ledger: record costs equal settlements, and the check is clean', async () => {
    const records = await recordsOf(tenant.accountId);
    const recorded = records.reduce((sum, r) => sum + BigInt(r.cost_micro_dzd), 0n);
    expect(recorded).toBe(await settledMicroDzd(tenant.accountId));
    const check = await stack.edge.api
      .get('/admin/v1/ledger/check')
      .set(bearer(stack.edge.adminToken));
    expect(check.body).toEqual({ ok: true, violations: [] });
  });
});

describe('GET /v1/usage', () => {
  let tenant: FundedAccount;
  let other: FundedAccount;
  let token: string;
  beforeAll(async () => {
    tenant = await fundAccount(stack.billing.operator);
    other = await fundAccount(stack.billing.operator);
    token = clientToken(tenant, { exp: nowS() + 600 });
    const client = stack.client(tenant.apiKey);
    await client.chat.completions.create({ model: MODEL, messages });
    await client.chat.completions.create({ model: MODEL, messages });
    await client.chat.completions.create({ model: OTHER_MODEL, messages });
    await stack.client(token).chat.completions.create({ model: OTHER_MODEL, messages });
    await stack.client(other.apiKey).chat.completions.create({ model: MODEL, messages });
    await waitForRecords(tenant.accountId, 4);
  });

  const usage = (credential: string, query: string) =>
    stack.edge.api.get(`/v1/usage?${query}`).set(bearer(credential));

  /** The groups expected from the stored records, summed independently. */
  async function expectedGroups(accountId: string, keyOf: (r: UsageRecord) => object) {
    const groups = new Map<string, Record<string, unknown>>();
    let total = 0n;
    for (const r of await recordsOf(accountId)) {
      const key = keyOf(r);
      const id = JSON.stringify(key);
      const g = groups.get(id) ?? { ...key, requests: 0, prompt: 0n, completion: 0n, cost: 0n };
      g.requests = (g.requests as number) + 1;
      g.prompt = (g.prompt as bigint) + BigInt(r.prompt_tokens);
      g.completion = (g.completion as bigint) + BigInt(r.completion_tokens);
      g.cost = (g.cost as bigint) + BigInt(r.cost_micro_dzd);
      total += BigInt(r.cost_micro_dzd);
      groups.set(id, g);
    }
    expect(total).toBe(await settledMicroDzd(accountId));
    return [...groups.values()].map(({ prompt, completion, cost, ...rest }) => ({
      ...rest,
      prompt_tokens: Number(prompt),
      completion_tokens: Number(completion),
      cost_dzd: dzd(cost as bigint),
      // Nothing here is refunded (cost_dzd is net of refunds: receipts.test.ts).
      refunded_dzd: 0,
    }));
  }

  it('groups by day, model and key with exact sums', async () => {
    const range = `from=${today()}&to=${tomorrow()}`;
    const byDay = await usage(tenant.apiKey, `${range}&group_by=day`);
    expect(byDay.status).toBe(200);
    expect(byDay.body).toEqual({
      object: 'list',
      data: await expectedGroups(tenant.accountId, (r) => ({
        day: r.ended_at.toISOString().slice(0, 10),
      })),
    });
    expect(byDay.body.data[0].requests).toBe(4);

    const byModel = await usage(tenant.apiKey, `${range}&group_by=model`);
    expect(byModel.body.data).toEqual(
      await expectedGroups(tenant.accountId, (r) => ({ model: r.model })),
    );
    expect(byModel.body.data.map((g: { model: string }) => g.model)).toEqual([MODEL, OTHER_MODEL]);

    const byKey = await usage(tenant.apiKey, `${range}&group_by=key`);
    const records = await recordsOf(tenant.accountId);
    const tokenId = records.find((r) => r.scoped_token_id !== null)?.scoped_token_id;
    expect(tokenId).toBeTruthy();
    expect(byKey.body.data).toEqual(
      expect.arrayContaining(
        await expectedGroups(tenant.accountId, (r) => ({
          key: r.api_key_name,
          scoped_token_id: r.scoped_token_id,
        })),
      ),
    );
    expect(byKey.body.data).toHaveLength(2);
    expect(byKey.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: 'auto', scoped_token_id: null, requests: 3 }),
        expect.objectContaining({ key: 'auto', scoped_token_id: tokenId, requests: 1 }),
      ]),
    );
  });

  it('defaults to the last 30 days grouped by day', async () => {
    const answer = await usage(tenant.apiKey, '');
    expect(answer.status).toBe(200);
    expect(answer.body.data.reduce((n: number, g: { requests: number }) => n + g.requests, 0)).toBe(
      4,
    );
  });

  it('an account never sees another account’s usage', async () => {
    const theirs = await usage(other.apiKey, `group_by=model`);
    expect(theirs.body.data).toEqual([expect.objectContaining({ model: MODEL, requests: 1 })]);
    // The operators' filter is not honoured on the public route.
    const sneaky = await usage(other.apiKey, `group_by=model&account=${tenant.accountId}`);
    expect(sneaky.body).toEqual(theirs.body);
  });

  it('refuses a scoped token (API key only)', async () => {
    const answer = await usage(token, 'group_by=day');
    expect(answer.status).toBe(401);
    expect(answer.body.error).toMatchObject({ code: 'invalid_api_key' });
  });

  it.each([
    ['from=yesterday', 'from'],
    ['from=2026-02-30', 'from'],
    ['to=2026-11-01T10:00:00', 'to'],
    ['from=2026-11-02&to=2026-11-01', 'from'],
    ['from=2026-11-01&to=2026-11-01', 'from'],
    ['from=2025-01-01&to=2026-11-01', 'to'],
    ['group_by=week', 'group_by'],
    ['group_by=day&group_by=model', 'group_by'],
  ])('400 invalid_request_body for %s', async (query, param) => {
    const answer = await usage(tenant.apiKey, query);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: expect.objectContaining({ code: 'invalid_request_body', param }),
    });
  });

  it('operators see every account under /admin/v1/usage, or one with ?account=', async () => {
    const admin = (query: string) =>
      stack.edge.api.get(`/admin/v1/usage?${query}`).set(bearer(stack.edge.adminToken));
    const all = await admin('group_by=model');
    expect(all.status).toBe(200);
    const accounts = new Set(all.body.data.map((g: { account_id: string }) => g.account_id));
    expect([...accounts]).toEqual(expect.arrayContaining([tenant.accountId, other.accountId]));
    const one = await admin(`group_by=model&account=${tenant.accountId}`);
    const mine = await usage(tenant.apiKey, 'group_by=model');
    expect(one.body.data).toEqual(
      mine.body.data.map((g: object) => ({ account_id: tenant.accountId, ...g })),
    );
    const log = await stack.edge.api
      .get(`/admin/v1/usage/requests?account=${tenant.accountId}&limit=2`)
      .set(bearer(stack.edge.adminToken));
    expect(log.body.data).toHaveLength(2);
    expect(log.body.next_cursor).toEqual(expect.any(String));
    expect(Object.keys(log.body.data[0]).sort()).not.toContain('messages');
    const unknown = await admin('account=usr_nobody');
    expect(unknown.status).toBe(404);
    const noToken = await stack.edge.api.get('/admin/v1/usage');
    expect(noToken.status).toBe(401);
  });
});
