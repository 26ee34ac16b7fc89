import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  putModel,
  settledRequest,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { TEST_DASHBOARD, operatorOf, ownerOf, type Browser } from '../testing/dashboard.suite.js';
import { startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * Budgets in the dashboard's API through edge: owners read their account's
 * budgets and cap their own keys, never another account's; operators set and remove key and
 * token budgets of any account, finance reads only. Real billing: spend comes from admissions
 * and settlements.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenantA: FundedAccount;
let tenantB: FundedAccount;
let ownerA: Browser;
let ownerB: Browser;
let ops: Browser;

const MODEL = 'acme/budgeted';

/** One request with `tenant`'s key, admitted and settled as edge and the worker do. */
const spend = (tenant: FundedAccount, holdId: string) =>
  settledRequest(billing, tenant, MODEL, holdId);

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { dashboard: TEST_DASHBOARD });
  tenantA = await fundAccount(billing.operator, { creditDzd: 100 });
  tenantB = await fundAccount(billing.operator, { creditDzd: 100 });
  await putModel(billing, MODEL);
  ownerA = await ownerOf(edge, tenantA, 'budgets.a@example.com');
  ownerB = await ownerOf(edge, tenantB, 'budgets.b@example.com');
  ops = await operatorOf(edge, 'budgets.ops@example.com', 'operator');
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

function expectError(
  response: { status: number; body: { error: { code: string; param?: string | null } } },
  status: number,
  code: string,
) {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
}

describe('owner: budgets', () => {
  it("caps the own key and shows the window's spend", async () => {
    const set = await ownerA
      .send('put', '/api-keys/auto/budget')
      .send({ limit_dzd: '5.5', period: 'day', time_zone: 'Africa/Algiers' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      object: 'budget',
      applies_to: 'api_key',
      owner: 'auto',
      period: 'day',
      time_zone: 'Africa/Algiers',
      limit_micro_dzd: '5500000',
      spent_micro_dzd: '0',
      resets_at: expect.any(String),
    });

    await spend(tenantA, 'budget-a1');
    const list = await ownerA.send('get', '/budgets');
    expect(list.status).toBe(200);
    expect(list.body.object).toBe('list');
    expect(list.body.data).toHaveLength(1);
    const [view] = list.body.data;
    expect(BigInt(view.spent_micro_dzd)).toBeGreaterThan(0n);
    expect(view.reserved_micro_dzd).toBe('0');
    expect(BigInt(view.remaining_micro_dzd)).toBe(5_500_000n - BigInt(view.spent_micro_dzd));
  });

  it("refuses another account's key (404), a bad body (400) and a missing CSRF token", async () => {
    const created = await ownerA.send('post', '/api-keys').send({ name: 'only-a' });
    expect(created.status).toBe(201);
    const put = { limit_dzd: 1, period: 'week' };
    expectError(
      await ownerB.send('put', '/api-keys/only-a/budget').send(put),
      404,
      'resource_not_found',
    );
    expectError(await ownerB.send('delete', '/api-keys/only-a/budget'), 404, 'resource_not_found');
    // B's own key of the same name as A's is B's: A's budget stays A's.
    expect((await ownerB.send('get', '/budgets')).body.data).toEqual([]);

    const badPeriod = await ownerA.send('put', '/api-keys/only-a/budget').send({
      limit_dzd: 1,
      period: 'year',
    });
    expectError(badPeriod, 400, 'invalid_request_body');
    expect(badPeriod.body.error.param).toBe('period');
    const badLimit = await ownerA
      .send('put', '/api-keys/only-a/budget')
      .send({ limit_dzd: '1.1234567', period: 'day' });
    expectError(badLimit, 400, 'invalid_request_body');
    expect(badLimit.body.error.param).toBe('limit_dzd');
    const badZone = await ownerA
      .send('put', '/api-keys/only-a/budget')
      .send({ limit_dzd: 1, period: 'day', time_zone: 'Mars/Olympus' });
    expectError(badZone, 400, 'invalid_request_body');
    expect(badZone.body.error.param).toBe('time_zone');

    expectError(
      await ownerA.send('put', '/api-keys/only-a/budget', { csrf: false }).send(put),
      403,
      'csrf_failed',
    );
    expectError(
      await ownerA.send('delete', '/api-keys/auto/budget', { csrf: false }),
      403,
      'csrf_failed',
    );
    expect((await ownerA.send('get', '/budgets')).body.data).toHaveLength(1);
  });

  it('removes the own key budget; owners never reach the operator routes', async () => {
    expect(
      (
        await ownerA.send('put', '/api-keys/only-a/budget').send({
          limit_dzd: 2,
          period: 'total',
        })
      ).status,
    ).toBe(200);
    expect((await ownerA.send('delete', '/api-keys/only-a/budget')).status).toBe(204);
    expectError(await ownerA.send('delete', '/api-keys/only-a/budget'), 404, 'resource_not_found');
    const owners = (await ownerA.send('get', '/budgets')).body.data.map(
      (budget: { owner: string }) => budget.owner,
    );
    expect(owners).toEqual(['auto']);
    expectError(
      await ownerA.send('get', `/operator/accounts/${tenantA.accountId}/budgets`),
      403,
      'forbidden',
    );
    expectError(await ops.send('get', '/budgets'), 403, 'forbidden');
  });
});

describe('operators: budgets', () => {
  it("sets and removes a key's and a token's budget of any account", async () => {
    const token = await ownerB.send('post', '/scoped-tokens').send({ api_key_name: 'auto' });
    expect(token.status).toBe(201);
    const [registered] = (await ownerB.send('get', '/scoped-tokens')).body.data;
    const account = `/operator/accounts/${tenantB.accountId}`;

    const key = await ops
      .send('put', `${account}/api-keys/auto/budget`)
      .send({ limit_dzd: 3, period: 'month' });
    expect(key.status).toBe(200);
    const tokenBudget = await ops
      .send('put', `${account}/scoped-tokens/${registered.id}/budget`)
      .send({ limit_dzd: '0.25', period: 'week', time_zone: 'Europe/Paris' });
    expect(tokenBudget.status).toBe(200);
    expect(tokenBudget.body).toMatchObject({ applies_to: 'scoped_token', owner: registered.id });

    const listed = await ops.send('get', `${account}/budgets`);
    expect(listed.body.data.map((b: { applies_to: string }) => b.applies_to)).toEqual([
      'api_key',
      'scoped_token',
    ]);
    // The owner sees both; the other account sees neither.
    expect((await ownerB.send('get', '/budgets')).body.data).toHaveLength(2);
    expect((await ownerA.send('get', '/budgets')).body.data).toHaveLength(1);

    expectError(
      await ops.send('put', `${account}/scoped-tokens/${registered.id}/budget`).send({
        limit_dzd: 0,
        period: 'week',
      }),
      400,
      'invalid_request_body',
    );
    expectError(
      await ops.send('delete', `${account}/scoped-tokens/tok_nobody/budget`),
      404,
      'resource_not_found',
    );
    expectError(
      await ops.send('get', '/operator/accounts/acct_nobody/budgets'),
      404,
      'resource_not_found',
    );
    expectError(
      await ops.send('delete', `${account}/api-keys/auto/budget`, { csrf: false }),
      403,
      'csrf_failed',
    );
    expect(
      (await ops.send('delete', `${account}/scoped-tokens/${registered.id}/budget`)).status,
    ).toBe(204);
    expect((await ops.send('delete', `${account}/api-keys/auto/budget`)).status).toBe(204);
    expect((await ops.send('get', `${account}/budgets`)).body.data).toEqual([]);
  });

  it('lets finance read budgets but not change them', async () => {
    const finance = await operatorOf(edge, 'budgets.finance@example.com', 'finance');
    const account = `/operator/accounts/${tenantA.accountId}`;
    const read = await finance.send('get', `${account}/budgets`);
    expect(read.status).toBe(200);
    expect(read.body.data).toHaveLength(1);
    expectError(
      await finance.send('put', `${account}/api-keys/auto/budget`).send({
        limit_dzd: 1,
        period: 'day',
      }),
      403,
      'forbidden',
    );
    expectError(await finance.send('delete', `${account}/api-keys/auto/budget`), 403, 'forbidden');
  });
});
