import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createBillingClient } from '@gateway/billing-client';
import { BudgetListSchema, GatewayError, KeyInfoSchema, compile } from '@gateway/contracts';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { KEY_READS_PER_MINUTE } from './key-reads.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * `GET /v1/key` and the operator API's budget routes through edge, with the real
 * billing behind it.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenant: FundedAccount;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing);
  tenant = await fundAccount(billing.operator, { rateLimitPerMinute: 5 });
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

// The answers match the contract's schemas (the OpenAPI document's components).
const isKeyInfo = compile(KeyInfoSchema);
const isBudgetList = compile(BudgetListSchema);
const admin = () => ({ Authorization: `Bearer ${edge.adminToken}` });
const keyBudgetPath = () => `/admin/v1/accounts/${tenant.accountId}/api-keys/auto/budget`;
/** Rate-limit windows are whole clock minutes: a comparison must not straddle two. */
async function awayFromMinuteBoundary(): Promise<void> {
  const leftMs = 60_000 - (Date.now() % 60_000);
  if (leftMs < 15_000) await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
}
const keyOf = (credential: string) => edge.api.get('/v1/key').set(bearer(credential));

describe('GET /v1/key', () => {
  it('shows an API key without a budget, then with one', async () => {
    const bare = await keyOf(tenant.apiKey);
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({
      object: 'key',
      kind: 'api_key',
      account_id: tenant.accountId,
      api_key: 'auto',
      scoped_token_id: null,
      budgets: [],
      spending_limit_dzd: null,
      spent_dzd: null,
      rate_limit: {
        limit_per_minute: 5,
        remaining: expect.any(Number),
        resets_at: expect.any(String),
        applies_to: 'account',
        tokens: null,
      },
    });
    expect(bare.headers['x-ratelimit-limit']).toBe('5');

    const set = await edge.api
      .put(keyBudgetPath())
      .set(admin())
      .send({ limit_dzd: 3, period: 'day', time_zone: 'Africa/Algiers' });
    expect(set.status).toBe(200);
    const shown = await keyOf(tenant.apiKey);
    expect(shown.body.budgets).toEqual([set.body]);
    expect([isKeyInfo(bare.body), isKeyInfo(shown.body)]).toEqual([true, true]);
    expect(shown.body.budgets[0]).toMatchObject({ owner: 'auto', limit_dzd: 3, remaining_dzd: 3 });
    expect((await edge.api.delete(keyBudgetPath()).set(admin())).status).toBe(204);
  });

  it("shows a scoped token: its id, its own budget beside its key's, its limit and spend", async () => {
    const created = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(tenant.apiKey))
      .send({ api_key_name: 'auto', expires_delta: 600, spending_limit: 2 });
    const token = created.body.token as string;
    const first = await keyOf(token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      kind: 'scoped_token',
      api_key: 'auto',
      budgets: [],
      spending_limit_dzd: 2,
      spent_dzd: 0,
    });
    const tokenId = first.body.scoped_token_id as string;
    const tokenBudget = await edge.api
      .put(`/admin/v1/accounts/${tenant.accountId}/scoped-tokens/${tokenId}/budget`)
      .set(admin())
      .send({ limit_dzd: '0.5', period: 'total' });
    expect([tokenBudget.status, tokenBudget.body.applies_to]).toEqual([200, 'scoped_token']);
    const withBudget = await keyOf(token);
    expect(withBudget.body.budgets).toEqual([tokenBudget.body]);
    expect(isKeyInfo(withBudget.body)).toBe(true);
    expect((await keyOf(tenant.apiKey)).body.budgets).toEqual([]);
  });

  it('does not consume the rate limit, even when the limit is used up', async () => {
    await awayFromMinuteBoundary();
    const remaining = async () => (await keyOf(tenant.apiKey)).body.rate_limit.remaining as number;
    const before = await remaining();
    for (let i = 0; i < 8; i += 1) expect((await keyOf(tenant.apiKey)).status).toBe(200);
    expect(await remaining()).toBe(before);
    // A counted route uses it up; the key can still be read, and says so.
    for (let i = 0; i < before; i += 1) {
      expect((await edge.api.get('/v1/user/balance').set(bearer(tenant.apiKey))).status).toBe(200);
    }
    expect((await edge.api.get('/v1/user/balance').set(bearer(tenant.apiKey))).status).toBe(429);
    const exhausted = await keyOf(tenant.apiKey);
    expect([exhausted.status, exhausted.body.rate_limit.remaining]).toEqual([200, 0]);
    expect(exhausted.headers['x-ratelimit-remaining']).toBe('0');
    // Not even a refusal counts (nor is refused for the limit): 405, not 429.
    expect((await edge.api.post('/v1/key').set(bearer(tenant.apiKey))).status).toBe(405);
  });

  it('is bounded per credential: 429 with Retry-After past KEY_READS_PER_MINUTE', async () => {
    const other = await fundAccount(billing.operator);
    let status = 200;
    let reads = 0;
    while (status === 200 && reads <= KEY_READS_PER_MINUTE) {
      status = (await keyOf(other.apiKey)).status;
      reads += 1;
    }
    const refused = await keyOf(other.apiKey);
    expect([reads, status, refused.status]).toEqual([KEY_READS_PER_MINUTE + 1, 429, 429]);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another credential reads on.
    expect((await keyOf(tenant.apiKey)).status).toBe(200);
  });

  it('refuses a missing or unknown credential: 401', async () => {
    const missing = await edge.api.get('/v1/key');
    expect([missing.status, missing.body.error.code]).toEqual([401, 'invalid_api_key']);
    const unknown = await keyOf('sk-nobody');
    expect([unknown.status, unknown.body.error.code]).toEqual([401, 'invalid_api_key']);
  });
});

describe('operator budget routes through edge', () => {
  it('validates the body at edge, naming the field, before billing is asked', async () => {
    const asked = billing.paths.length;
    const refused = await edge.api
      .put(keyBudgetPath())
      .set(admin())
      .send({ limit_dzd: 1, period: 'fortnight' });
    expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([
      400,
      'invalid_request_body',
      'period',
    ]);
    expect(billing.paths.slice(asked)).toEqual([]);
  });

  it("passes billing's answers through: 200 views, the list, 204, then 404", async () => {
    const set = await edge.api
      .put(keyBudgetPath())
      .set(admin())
      .send({ limit_dzd: 7, period: 'week' });
    expect(set.status).toBe(200);
    expect((await edge.api.get(keyBudgetPath()).set(admin())).body).toEqual(set.body);
    const list = await edge.api.get(`/admin/v1/accounts/${tenant.accountId}/budgets`).set(admin());
    expect(list.body.data).toContainEqual(set.body);
    expect(isBudgetList(list.body)).toBe(true);
    expect((await edge.api.delete(keyBudgetPath()).set(admin())).status).toBe(204);
    const gone = await edge.api.get(keyBudgetPath()).set(admin());
    expect([gone.status, gone.body.error.code]).toEqual([404, 'resource_not_found']);
    const noToken = await edge.api
      .get(`/admin/v1/accounts/${tenant.accountId}/scoped-tokens/tok_none/budget`)
      .set(admin());
    expect(noToken.status).toBe(404);
    expect((await edge.api.get(keyBudgetPath())).status).toBe(401);
  });
});

describe("billing-client's budget methods", () => {
  it('sets, reads, lists and removes budgets and reads a key, typed', async () => {
    const client = createBillingClient({
      baseUrl: billing.url,
      token: billing.internalToken,
      timeoutMs: 5_000,
    });
    try {
      const owner = { apiKey: 'auto' };
      const view = await client.operator.putBudget(tenant.accountId, owner, {
        limit_dzd: '1.5',
        period: 'month',
      });
      expect(view).toMatchObject({ applies_to: 'api_key', limit_micro_dzd: '1500000' });
      expect(await client.operator.getBudget(tenant.accountId, owner)).toEqual(view);
      expect((await client.operator.listBudgets(tenant.accountId)).data).toContainEqual(view);
      expect((await client.keyInfo(`Bearer ${tenant.apiKey}`)).budgets).toEqual([view]);
      await client.operator.removeBudget(tenant.accountId, owner);
      const gone = await client.operator.getBudget(tenant.accountId, owner).catch((e) => e);
      expect(gone).toBeInstanceOf(GatewayError);
      expect((gone as GatewayError).code).toBe('resource_not_found');
      const token = await client.operator
        .getBudget(tenant.accountId, { scopedTokenId: 'tok_none' })
        .catch((e: GatewayError) => e.code);
      expect(token).toBe('resource_not_found');
    } finally {
      await client.close();
    }
  });
});
