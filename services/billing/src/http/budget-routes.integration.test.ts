import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fundAccount } from '@gateway/testing';
import { putChatModel, startBillingApi, type BillingApiUnderTest } from './billing-api.suite.js';

/*
 * The budget routes of the operator API (`/internal/v1/admin/...`, edge's `/admin/v1/...`) and
 * `POST /internal/v1/key` (edge's `GET /v1/key`) over a real database.
 */

let billing: BillingApiUnderTest;
let accountId: string;
let key: string;
const MODEL = 'acme/budget-chat';

beforeAll(async () => {
  billing = await startBillingApi();
  ({ accountId, apiKey: key } = await fundAccount(billing.operator, {
    name: 'Budgeted',
    keyName: 'auto',
    credit: { idempotencyKey: 'budget-topup', reference: 'wire' },
  }));
  await putChatModel(billing, {
    id: MODEL,
    inputPriceDzdPerM: 100,
    outputPriceDzdPerM: 300,
    maxOutputTokens: 1000,
  });
});

afterAll(async () => {
  await billing?.close();
});

const admin = (method: 'get' | 'put' | 'delete', path: string) =>
  billing.call(method, `/admin/accounts/${accountId}${path}`);
/** Rate-limit windows are whole clock minutes: a comparison must not straddle two. */
async function awayFromMinuteBoundary(): Promise<void> {
  const leftMs = 60_000 - (Date.now() % 60_000);
  if (leftMs < 5_000) await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
}
const keyInfo = (credential: string) =>
  billing.call('post', '/key').send({ authorization: `Bearer ${credential}` });

describe('operator budget routes', () => {
  it("sets, reads, lists and removes a key's budget", async () => {
    const put = await admin('put', '/api-keys/auto/budget').send({
      limit_dzd: 5,
      period: 'month',
      time_zone: 'Africa/Algiers',
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      object: 'budget',
      applies_to: 'api_key',
      owner: 'auto',
      period: 'month',
      time_zone: 'Africa/Algiers',
      limit_dzd: 5,
      spent_dzd: 0,
      reserved_dzd: 0,
      remaining_dzd: 5,
      limit_micro_dzd: '5000000',
    });
    expect(typeof put.body.resets_at).toBe('string');

    const got = await admin('get', '/api-keys/auto/budget');
    expect([got.status, got.body]).toEqual([200, put.body]);
    const list = await admin('get', '/budgets');
    expect([list.status, list.body]).toEqual([200, { object: 'list', data: [put.body] }]);

    const removed = await admin('delete', '/api-keys/auto/budget');
    expect([removed.status, removed.text]).toEqual([204, '']);
    const gone = await admin('get', '/api-keys/auto/budget');
    expect([gone.status, gone.body.error.code]).toEqual([404, 'resource_not_found']);
    const again = await admin('delete', '/api-keys/auto/budget');
    expect([again.status, again.body.error.code]).toEqual([404, 'resource_not_found']);
    expect((await admin('get', '/budgets')).body).toEqual({ object: 'list', data: [] });
  });

  it('refuses a body the contract refuses: 400 invalid_request_body naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ period: 'day' }, 'limit_dzd'],
      [{ limit_dzd: 1, period: 'year' }, 'period'],
      [{ limit_dzd: -1, period: 'day' }, 'limit_dzd'],
      [{ limit_dzd: 0.0000001, period: 'day' }, 'limit_dzd'],
      [{ limit_dzd: 1, period: 'day', time_zone: 'Mars/Olympus_Mons' }, 'time_zone'],
      // Known to PostgreSQL, but files or legacy rules of the machine's tz database.
      ...['localtime', 'posixrules', 'Factory', 'EST5EDT', 'posix/Africa/Algiers', 'right/UTC'].map(
        (zone): [unknown, string] => [
          { limit_dzd: 1, period: 'day', time_zone: zone },
          'time_zone',
        ],
      ),
      [{ limit_dzd: 1, period: 'day', extra: true }, 'extra'],
    ];
    for (const [body, param] of cases) {
      const refused = await admin('put', '/api-keys/auto/budget').send(body as object);
      expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([
        400,
        'invalid_request_body',
        param,
      ]);
    }
    expect((await admin('get', '/api-keys/auto/budget')).status).toBe(404);
  });

  it('accepts UTC and IANA Area/Location names, three levels and fixed offsets included', async () => {
    for (const zone of ['UTC', 'Africa/Algiers', 'America/Argentina/Buenos_Aires', 'Etc/GMT+1']) {
      const put = await admin('put', '/api-keys/auto/budget').send({
        limit_dzd: 1,
        period: 'day',
        time_zone: zone,
      });
      expect([put.status, put.body.time_zone]).toEqual([200, zone]);
    }
    expect((await admin('delete', '/api-keys/auto/budget')).status).toBe(204);
  });

  it('answers 404 resource_not_found for an unknown account, key or token', async () => {
    const body = { limit_dzd: 1, period: 'day' };
    for (const [method, path] of [
      ['put', `/admin/accounts/acc_nobody/api-keys/auto/budget`],
      ['get', `/admin/accounts/acc_nobody/budgets`],
      ['put', `/admin/accounts/${accountId}/api-keys/nokey/budget`],
      ['get', `/admin/accounts/${accountId}/api-keys/nokey/budget`],
      ['delete', `/admin/accounts/${accountId}/api-keys/nokey/budget`],
      ['put', `/admin/accounts/${accountId}/scoped-tokens/tok_none/budget`],
      ['get', `/admin/accounts/${accountId}/scoped-tokens/tok_none/budget`],
      ['delete', `/admin/accounts/${accountId}/scoped-tokens/tok_none/budget`],
    ] as const) {
      const answer = await billing.call(method, path).send(body);
      expect([path, method, answer.status, answer.body.error.code]).toEqual([
        path,
        method,
        404,
        'resource_not_found',
      ]);
    }
  });

  it("is edge's alone: the worker's credential cannot set a budget", async () => {
    const refused = await billing
      .call('put', `/admin/accounts/${accountId}/api-keys/auto/budget`, 'worker')
      .send({ limit_dzd: 1, period: 'day' });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    const key = await billing.call('post', '/key', 'worker').send({ authorization: 'Bearer x' });
    expect(key.status).toBe(403);
  });
});

describe('POST /key', () => {
  it("shows an API key: its budget, no token fields, and the account's rate limit", async () => {
    const bare = await keyInfo(key);
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({
      object: 'key',
      kind: 'api_key',
      account_id: accountId,
      api_key: 'auto',
      scoped_token_id: null,
      budgets: [],
      spending_limit_dzd: null,
      spent_dzd: null,
    });
    const { rate_limit: rateLimit } = bare.body as {
      rate_limit: { limit_per_minute: number; remaining: number; resets_at: string };
    };
    expect(rateLimit.remaining).toBe(rateLimit.limit_per_minute);
    expect(Date.parse(rateLimit.resets_at)).toBeGreaterThan(Date.now());

    const budget = (
      await admin('put', '/api-keys/auto/budget').send({ limit_dzd: '2.5', period: 'day' })
    ).body;
    const withBudget = await keyInfo(key);
    expect(withBudget.body.budgets).toEqual([budget]);
    await admin('delete', '/api-keys/auto/budget');
  });

  it('is not counted against the rate limit; an authenticated request is', async () => {
    await awayFromMinuteBoundary();
    const remaining = async () => (await keyInfo(key)).body.rate_limit.remaining as number;
    const before = await remaining();
    expect(await remaining()).toBe(before);
    const counted = await billing.call('post', '/authenticate').send({
      authorization: `Bearer ${key}`,
    });
    expect(counted.status).toBe(200);
    expect(await remaining()).toBe(before - 1);
  });

  it("shows a scoped token: its id, its key's and its own budget, its limit and spend", async () => {
    const created = await billing
      .call('post', `/accounts/${accountId}/scoped-tokens`)
      .send({ api_key_name: 'auto', spending_limit: 3, expires_delta: 3600 });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    const first = await keyInfo(token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      kind: 'scoped_token',
      api_key: 'auto',
      budgets: [],
      spending_limit_dzd: 3,
      spent_dzd: 0,
    });
    const tokenId = first.body.scoped_token_id as string;
    expect(tokenId).toMatch(/^tok_/);

    const keyBudget = await admin('put', '/api-keys/auto/budget').send({
      limit_dzd: 4,
      period: 'total',
    });
    const tokenBudget = await admin('put', `/scoped-tokens/${tokenId}/budget`).send({
      limit_dzd: 1,
      period: 'week',
    });
    expect([tokenBudget.status, tokenBudget.body.applies_to, tokenBudget.body.owner]).toEqual([
      200,
      'scoped_token',
      tokenId,
    ]);
    expect(keyBudget.body.resets_at).toBeNull();
    const info = await keyInfo(token);
    expect(info.body.budgets).toEqual([keyBudget.body, tokenBudget.body]);
    // The key itself sees its own budget only.
    expect((await keyInfo(key)).body.budgets).toEqual([keyBudget.body]);
    expect((await admin('get', '/budgets')).body.data).toHaveLength(2);

    expect((await admin('delete', `/scoped-tokens/${tokenId}/budget`)).status).toBe(204);
    expect((await admin('get', `/scoped-tokens/${tokenId}/budget`)).status).toBe(404);
    await admin('delete', '/api-keys/auto/budget');
  });

  it('refuses a credential billing refuses, in the one error shape', async () => {
    const refused = await keyInfo('sk-not-a-key');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_api_key']);
  });
});
