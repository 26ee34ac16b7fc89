import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  TEST_DASHBOARD,
  adminAuth,
  operatorOf,
  ownerOf,
  type Browser,
} from '../testing/dashboard.suite.js';
import { startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * Per-key rate limits in the dashboard's API through edge: owners read their
 * account's key and token limits and limit their own keys, never another account's; operators
 * set and remove key and token limits of any account, finance reads only. Real billing.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenantA: FundedAccount;
let tenantB: FundedAccount;
let ownerA: Browser;
let ownerB: Browser;
let ops: Browser;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { dashboard: TEST_DASHBOARD });
  tenantA = await fundAccount(billing.operator, { creditDzd: 10 });
  tenantB = await fundAccount(billing.operator, { creditDzd: 10 });
  ownerA = await ownerOf(edge, tenantA, 'limits.a@example.com');
  ownerB = await ownerOf(edge, tenantB, 'limits.b@example.com');
  ops = await operatorOf(edge, 'limits.ops@example.com', 'operator');
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

type Answer = { status: number; body: { error: { code: string; param?: string | null } } };

function expectError(response: Answer, status: number, code: string, param?: string) {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
  if (param !== undefined) expect(response.body.error.param).toBe(param);
}

const limit = (owner: string, rpm: number | null, tpm: number | null, kind = 'api_key') => ({
  object: 'rate_limit',
  applies_to: kind,
  owner,
  requests_per_minute: rpm,
  tokens_per_minute: tpm,
});

describe('owner: rate limits', () => {
  it('limits the own key and lists it', async () => {
    const set = await ownerA
      .send('put', '/api-keys/auto/rate-limit')
      .send({ requests_per_minute: 30, tokens_per_minute: 50_000 });
    expect([set.status, set.body]).toEqual([200, limit('auto', 30, 50_000)]);
    const list = await ownerA.send('get', '/rate-limits');
    expect([list.status, list.body]).toEqual([
      200,
      { object: 'list', data: [limit('auto', 30, 50_000)] },
    ]);
    // What the operator API sees is the same limit.
    const admin = await edge.api
      .get(`/admin/v1/accounts/${tenantA.accountId}/rate-limits`)
      .set(adminAuth(edge));
    expect([admin.status, admin.body.data]).toEqual([200, [limit('auto', 30, 50_000)]]);
  });

  it("refuses another account's key (404), a bad body (400) and a missing CSRF token", async () => {
    expect((await ownerA.send('post', '/api-keys').send({ name: 'only-a' })).status).toBe(201);
    const body = { requests_per_minute: 5 };
    expectError(
      await ownerB.send('put', '/api-keys/only-a/rate-limit').send(body),
      404,
      'resource_not_found',
    );
    expectError(
      await ownerB.send('delete', '/api-keys/only-a/rate-limit'),
      404,
      'resource_not_found',
    );
    expect((await ownerB.send('get', '/rate-limits')).body.data).toEqual([]);

    const path = '/api-keys/only-a/rate-limit';
    const bad: [object, string][] = [
      [{ requests_per_minute: 0 }, 'requests_per_minute'],
      [{ requests_per_minute: 1_000_001 }, 'requests_per_minute'],
      [{ tokens_per_minute: 1.5 }, 'tokens_per_minute'],
    ];
    for (const [sent, param] of bad) {
      expectError(await ownerA.send('put', path).send(sent), 400, 'invalid_request_body', param);
    }
    expectError(await ownerA.send('put', path).send({}), 400, 'invalid_request_body');
    expectError(await ownerA.send('put', path, { csrf: false }).send(body), 403, 'csrf_failed');
    expectError(
      await ownerA.send('delete', '/api-keys/auto/rate-limit', { csrf: false }),
      403,
      'csrf_failed',
    );
    expect((await ownerA.send('get', '/rate-limits')).body.data).toEqual([
      limit('auto', 30, 50_000),
    ]);
  });

  it("removes the own key's limits; tokens' and the operator routes are not the owner's", async () => {
    expect((await ownerA.send('delete', '/api-keys/auto/rate-limit')).status).toBe(204);
    expect((await ownerA.send('get', '/rate-limits')).body.data).toEqual([]);
    expect(
      (
        await ownerA
          .send('put', '/scoped-tokens/tok_any/rate-limit')
          .send({ requests_per_minute: 1 })
      ).status,
    ).toBe(404);
    expectError(
      await ownerA.send('get', `/operator/accounts/${tenantA.accountId}/rate-limits`),
      403,
      'forbidden',
    );
    expectError(await ops.send('get', '/rate-limits'), 403, 'forbidden');
  });
});

describe('operators: rate limits', () => {
  it("sets and removes a key's and a token's limits of any account", async () => {
    expect(
      (await ownerB.send('post', '/scoped-tokens').send({ api_key_name: 'auto' })).status,
    ).toBe(201);
    const [registered] = (await ownerB.send('get', '/scoped-tokens')).body.data;
    const account = `/operator/accounts/${tenantB.accountId}`;

    const key = await ops.send('put', `${account}/api-keys/auto/rate-limit`).send({
      requests_per_minute: 12,
    });
    expect([key.status, key.body]).toEqual([200, limit('auto', 12, null)]);
    const token = await ops
      .send('put', `${account}/scoped-tokens/${registered.id}/rate-limit`)
      .send({ tokens_per_minute: 4000 });
    expect([token.status, token.body]).toEqual([
      200,
      limit(registered.id, null, 4000, 'scoped_token'),
    ]);
    const expected = [limit('auto', 12, null), limit(registered.id, null, 4000, 'scoped_token')];
    expect((await ops.send('get', `${account}/rate-limits`)).body.data).toEqual(expected);
    // The owner sees both; the other account sees neither.
    expect((await ownerB.send('get', '/rate-limits')).body.data).toEqual(expected);
    expect((await ownerA.send('get', '/rate-limits')).body.data).toEqual([]);

    expectError(
      await ops
        .send('put', `${account}/scoped-tokens/${registered.id}/rate-limit`)
        .send({ tokens_per_minute: 0 }),
      400,
      'invalid_request_body',
      'tokens_per_minute',
    );
    expectError(
      await ops.send('delete', `${account}/scoped-tokens/tok_nobody/rate-limit`),
      404,
      'resource_not_found',
    );
    expectError(
      await ops.send('get', '/operator/accounts/acct_nobody/rate-limits'),
      404,
      'resource_not_found',
    );
    expectError(
      await ops.send('delete', `${account}/api-keys/auto/rate-limit`, { csrf: false }),
      403,
      'csrf_failed',
    );
    expect(
      (await ops.send('delete', `${account}/scoped-tokens/${registered.id}/rate-limit`)).status,
    ).toBe(204);
    expect((await ops.send('delete', `${account}/api-keys/auto/rate-limit`)).status).toBe(204);
    expect((await ops.send('get', `${account}/rate-limits`)).body.data).toEqual([]);
  });

  it('lets finance read rate limits but not change them', async () => {
    const finance = await operatorOf(edge, 'limits.finance@example.com', 'finance');
    const account = `/operator/accounts/${tenantA.accountId}`;
    expect(
      (await ownerA.send('put', '/api-keys/auto/rate-limit').send({ requests_per_minute: 3 }))
        .status,
    ).toBe(200);
    const read = await finance.send('get', `${account}/rate-limits`);
    expect([read.status, read.body.data]).toEqual([200, [limit('auto', 3, null)]]);
    expectError(
      await finance.send('put', `${account}/api-keys/auto/rate-limit`).send({
        requests_per_minute: 1,
      }),
      403,
      'forbidden',
    );
    expectError(
      await finance.send('delete', `${account}/api-keys/auto/rate-limit`),
      403,
      'forbidden',
    );
    expect((await finance.send('get', `${account}/rate-limits`)).body.data).toEqual([
      limit('auto', 3, null),
    ]);
  });
});
