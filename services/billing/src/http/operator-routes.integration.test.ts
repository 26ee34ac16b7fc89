import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  OPERATOR_ROUTES as R,
  type Route,
  type RouteAnswer,
  type RouteInput,
} from '@gateway/contracts';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import { startBillingApi, type BillingApiUnderTest } from './billing-api.suite.js';
import {
  RouteAgreement,
  routeRequest,
} from '../../../../packages/testing/src/route-agreement.suite.js';

/*
 * The operator API's contract (`OPERATOR_ROUTES`) agrees with what billing serves: every route
 * billing serves is called here once with a request its body schema accepts, answers with the
 * route's status, and its answer passes the route's answer schema. A route added to the contract
 * without a call here fails the last test; an answer that drifts from its schema fails its call.
 * The dispatcher's routes are its own table's (`DISPATCHER_ROUTES`, its agreement test).
 */

let billing: BillingApiUnderTest;
const agreement = new RouteAgreement();

beforeAll(async () => {
  billing = await startBillingApi();
});

afterAll(async () => {
  await billing?.close();
});

/** Calls one route through billing's operator API; checks its status and its answer's schema. */
async function call<Called extends Route>(
  route: Called,
  input: RouteInput<Called>,
): Promise<RouteAnswer<Called>> {
  const sent = routeRequest(billing.api, '/internal/v1/admin', route, input);
  return agreement.answerOf(route, sent.set(INTERNAL_TOKEN_HEADER, billing.internalToken));
}

/** Admits a request of the account's key: its hold stays open. */
async function admittedRequest(key: string, holdId: string): Promise<void> {
  const admitted = await billing.call('post', '/admissions').send({
    authorization: `Bearer ${key}`,
    holdId,
    model: 'acme/routes-1',
    estimate: { inputTokens: 100, maxOutputTokens: 50, choices: 1 },
    priority: false,
  });
  expect(admitted.status).toBe(200);
}

/** A settled request of the account's key: its hold id. */
async function settledRequest(key: string): Promise<string> {
  await admittedRequest(key, 'chatcmpl-operator-routes-1');
  const settled = await billing
    .call('post', '/holds/chatcmpl-operator-routes-1/settle', 'worker')
    .send({ inputTokens: 100, outputTokens: 10 });
  expect(settled.status).toBe(200);
  return 'chatcmpl-operator-routes-1';
}

describe('the operator API contract, against billing', () => {
  it('serves accounts, keys, credits and statements as the contract says', async () => {
    const account = await call(R.createAccount, { body: { name: 'Contract' } });
    const id = { id: account.id };
    await call(R.listAccounts, { query: new URLSearchParams({ limit: '5' }) });
    await call(R.getAccount, { params: id });
    await call(R.patchAccount, { params: id, body: { rate_limit_per_minute: 120 } });
    await call(R.suspendAccount, { params: id });
    await call(R.unsuspendAccount, { params: id });
    const issued = await call(R.createApiKey, { params: id, body: { name: 'main' } });
    await call(R.createApiKey, { params: id, body: { name: 'spare' } });
    await call(R.listApiKeys, { params: id });
    await call(R.regenerateApiKey, { params: { ...id, name: 'spare' } });
    await call(R.deleteApiKey, { params: { ...id, name: 'spare' } });
    await call(R.credit, {
      params: id,
      body: { amount_dzd: 10 },
      headers: { 'Idempotency-Key': 'contract-credit-1' },
    });
    await call(R.statement, { params: id });
    await call(R.invite, { params: id, body: { email: 'owner@example.com' } });

    await call(R.putModel, {
      params: { model: 'acme/routes-1' },
      body: {
        kind: 'chat',
        provider: 'node',
        upstream_model: 'routes-1',
        input_price_dzd_per_m: 100,
        output_price_dzd_per_m: 300,
        max_output_tokens: 1000,
        nodes: [{ url: 'http://127.0.0.1:9' }],
      },
    });
    await call(R.listModels, {});
    await call(R.nodeHealth, {});

    const holdId = await settledRequest(issued.key);
    await call(R.receipt, { params: { ...id, requestId: holdId } });
    await admittedRequest(issued.key, 'chatcmpl-operator-routes-open');
    const open = await call(R.openHolds, { params: id });
    expect(open.data.map((hold) => [hold.hold_id, hold.published])).toEqual([
      ['chatcmpl-operator-routes-open', false],
    ]);
    // Every open hold listed: they make up the account's reserved total.
    expect(open).toMatchObject({
      has_more: false,
      reserved_micro_dzd: open.data[0]!.amount_micro_dzd,
    });
    expect((await call(R.getAccount, { params: id })).reserved_dzd).toBeGreaterThan(0);
    await call(R.usage, {});
    await call(R.usageRequests, {});
    await call(R.ledgerEntries, { query: new URLSearchParams({ account: account.id }) });
    await call(R.ledgerCheck, {});
  });

  it('serves the per-key settings: budgets, rate limits, models, alerts', async () => {
    const account = await call(R.createAccount, { body: { name: 'Settings' } });
    const id = account.id;
    await call(R.createApiKey, { params: { id }, body: { name: 'k' } });
    const token = await billing
      .call('post', `/accounts/${id}/scoped-tokens`)
      .send({ api_key_name: 'k', expires_delta: 3600 });
    expect(token.status).toBe(201);
    const info = await billing
      .call('post', '/key')
      .send({ authorization: `Bearer ${token.body.token as string}` });
    const key = { id, name: 'k' };
    const scoped = { id, tokenId: info.body.scoped_token_id as string };

    const budget = { limit_dzd: 5, period: 'day' } as const;
    await call(R.putKeyBudget, { params: key, body: budget });
    await call(R.getKeyBudget, { params: key });
    await call(R.putTokenBudget, { params: scoped, body: budget });
    await call(R.getTokenBudget, { params: scoped });
    await call(R.listBudgets, { params: { id } });
    await call(R.removeKeyBudget, { params: key });
    await call(R.removeTokenBudget, { params: scoped });

    await call(R.putKeyRateLimit, { params: key, body: { requests_per_minute: 10 } });
    await call(R.getKeyRateLimit, { params: key });
    await call(R.putTokenRateLimit, { params: scoped, body: { tokens_per_minute: 1000 } });
    await call(R.getTokenRateLimit, { params: scoped });
    await call(R.listKeyRateLimits, { params: { id } });
    await call(R.removeKeyRateLimit, { params: key });
    await call(R.removeTokenRateLimit, { params: scoped });

    await call(R.putKeyModels, { params: key, body: { models: ['acme/any'] } });
    await call(R.getKeyModels, { params: key });

    await call(R.putAlerts, {
      params: { id },
      body: { url: 'https://alerts.example.com/hook', balance_below_dzd: 1 },
    });
    await call(R.getAlerts, { params: { id } });
    await call(R.removeAlerts, { params: { id } });

    const tokens = await call(R.listScopedTokens, { params: { id } });
    expect(tokens.data.map((listed) => listed.id)).toEqual([scoped.tokenId]);
    await call(R.revokeScopedToken, { body: { token: token.body.token as string } });
  });

  it('serves the books and the platform team', async () => {
    await call(R.ledgerReport, {
      query: new URLSearchParams({ from: '2025-01-01', to: '2025-01-31' }),
    });
    await call(R.closePeriod, { params: { period: '2025-01' }, body: { closed_by: 'finance' } });
    await call(R.closedPeriods, {});
    await call(R.closedPeriod, { params: { period: '2025-01' } });
    await call(R.createOperatorUser, {
      body: { email: 'ops@example.com', role: 'operator', password: 'a long enough password' },
    });
  });

  it('checks every body by its route’s schema, as edge does: an unknown field is 400', async () => {
    const refused = async <Called extends Route>(route: Called, input: RouteInput<Called>) => {
      const answer = await routeRequest(billing.api, '/internal/v1/admin', route, input).set(
        INTERNAL_TOKEN_HEADER,
        billing.internalToken,
      );
      return { route: route.path, status: answer.status, code: answer.body.error?.code };
    };
    const account = await call(R.createAccount, { body: { name: 'Strict' } });
    const id = { id: account.id };
    // A body with one field the schema does not name (typed as the route's, to send it).
    const extra = <Body extends object>(body: Body): Body => ({ ...body, colour: 'blue' });
    for (const answer of [
      await refused(R.createAccount, { body: extra({ name: 'x' }) }),
      await refused(R.patchAccount, { params: id, body: extra({ webhook_format: 'A' as const }) }),
      await refused(R.createApiKey, { params: id, body: extra({ name: 'k' }) }),
      await refused(R.credit, { params: id, body: extra({ amount_dzd: 1 }) }),
    ]) {
      expect(answer).toEqual({ ...answer, status: 400, code: 'invalid_request_body' });
    }
    // The account comes first: an unknown one is 404 before its body is read.
    const unknown = await refused(R.credit, {
      params: { id: 'acct_unknown' },
      body: extra({ amount_dzd: 1 }),
    });
    expect(unknown.status).toBe(404);
  });

  it('has called every route billing serves', () => {
    const served = Object.values(R).filter((route) => route.server === 'billing');
    expect(agreement.missed(served)).toEqual([]);
  });
});
