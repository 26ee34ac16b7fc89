import { startDashboardStack, type DashboardStack } from '../testing/dashboard-stack.suite.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DASHBOARD_ACCOUNT_ROUTES,
  DASHBOARD_API_PREFIX,
  DASHBOARD_BUDGET_ROUTES,
  DASHBOARD_CSRF_HEADER,
  DASHBOARD_FINANCE_ROUTES as FINANCE,
  DASHBOARD_OPERATOR_ROUTES as OPERATOR,
  DASHBOARD_OWNER_ROUTES as OWNER,
  DASHBOARD_RATE_LIMIT_ROUTES,
  DASHBOARD_SESSION_ROUTES as SESSION,
  DashboardSessionSchema,
  type DashboardSession,
  type Route,
  type RouteAnswer,
  type RouteInput,
} from '@gateway/contracts';
import { fundAccount, type FundedAccount } from '@gateway/testing';
import {
  putModel,
  settledRequest,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  RouteAgreement,
  routeRequest,
} from '../../../../packages/testing/src/route-agreement.suite.js';
import { completedEvent, type Harness } from '../../../dispatcher/src/testing/harness.suite.js';
import { type Receiver } from '../../../dispatcher/src/testing/receiver.suite.js';
import { ORIGIN, PASSWORD, adminAuth, invite } from '../testing/dashboard.suite.js';
import { type EdgeUnderTest } from '../testing/edge.suite.js';

/*
 * The dashboard API's contract (the tables of packages/contracts' dashboard-routes.ts,
 * dashboard-owner-routes.ts and dashboard-operator-routes.ts) agrees with what edge serves, over
 * the real billing and the real dispatcher: every route is called here as the app calls it
 * (session cookie, CSRF header on state changes), with a request its body schema accepts,
 * answers with the route's status, and its answer passes the route's answer schema. A route
 * added to a table without a call here fails the last test. (The routes that also answer CSV
 * are called for their JSON, the route's answer.)
 */

let stack: DashboardStack;
let billing: BillingUnderTest;
let receiver: Receiver;
let dispatcher: Harness;
let edge: EdgeUnderTest;
let tenant: FundedAccount;
const agreement = new RouteAgreement();

const TABLES: Record<string, Record<string, Route>> = {
  DASHBOARD_SESSION_ROUTES: SESSION,
  DASHBOARD_OWNER_ROUTES: OWNER,
  DASHBOARD_OPERATOR_ROUTES: OPERATOR,
  DASHBOARD_FINANCE_ROUTES: FINANCE,
  DASHBOARD_BUDGET_ROUTES,
  DASHBOARD_RATE_LIMIT_ROUTES,
  DASHBOARD_ACCOUNT_ROUTES,
};

beforeAll(async () => {
  stack = await startDashboardStack();
  ({ billing, dispatcher, receiver, edge } = stack);
  tenant = await fundAccount(billing.operator, { creditDzd: 10 });
  await putModel(billing, 'acme/chat');
});

afterAll(async () => {
  await stack?.close();
});

/** A browser of the dashboard: its session cookie and CSRF token, as the app sends them. */
class Viewer {
  cookie = '';
  csrf = '';

  /** Calls one route; checks its status and its answer's schema; keeps a cookie it sets. */
  async call<Called extends Route>(
    route: Called,
    input: RouteInput<Called>,
  ): Promise<RouteAnswer<Called>> {
    const sent = routeRequest(edge.api, DASHBOARD_API_PREFIX, route, input);
    if (this.cookie !== '') sent.set('Cookie', this.cookie);
    if (route.method !== 'GET') sent.set('Origin', ORIGIN).set(DASHBOARD_CSRF_HEADER, this.csrf);
    const answer = await sent;
    agreement.check(route, answer.status, answer.body);
    const setCookie = (answer.headers['set-cookie'] as unknown as string[] | undefined)?.[0];
    if (setCookie !== undefined) this.cookie = setCookie.split(';')[0] ?? '';
    // Sign-in, acceptance and the session answer the session, with its CSRF token.
    if (route.answer === DashboardSessionSchema) {
      this.csrf = (answer.body as DashboardSession).csrf_token;
    }
    return answer.body as RouteAnswer<Called>;
  }
}

/** The tenant's owner, invited and signed in through the contract's routes. */
async function signedInOwner(email: string): Promise<Viewer> {
  const token = await invite(edge, tenant.accountId, email);
  const viewer = new Viewer();
  await viewer.call(SESSION.acceptInvitation, { body: { token, password: PASSWORD } });
  return viewer;
}

/** An operator user of the role, created with the admin token and signed in. */
async function signedInStaff(email: string, role: 'operator' | 'finance'): Promise<Viewer> {
  const created = await edge.api
    .post('/admin/v1/operator-users')
    .set(adminAuth(edge))
    .send({ email, role, password: PASSWORD });
  expect(created.status).toBe(201);
  const viewer = new Viewer();
  await viewer.call(SESSION.signIn, { body: { email, password: PASSWORD, realm: 'operator' } });
  return viewer;
}

/** One request of the tenant's key, admitted and settled as edge and the worker do: its id. */
async function tenantRequest(holdId: string): Promise<string> {
  await settledRequest(billing, tenant, 'acme/chat', holdId);
  return holdId;
}

/** A webhook delivery of the tenant's, delivered (so it may be sent again): its id. */
async function deliveredWebhook(): Promise<string> {
  const event = completedEvent(receiver.url('/routes'), { accountId: tenant.accountId });
  const { deliveryId } = await dispatcher.dispatcher.intake.accept(event);
  await stack.dispatchOnce();
  return deliveryId;
}

const RANGE = new URLSearchParams({
  from: new Date(Date.now() - 86_400_000).toISOString(),
  to: new Date(Date.now() + 86_400_000).toISOString(),
});

describe("the dashboard API's contract, against edge", () => {
  it('serves sign-in, the session, sign-out and invitation acceptance', async () => {
    const owner = await signedInOwner('routes.session@example.com');
    const session = await owner.call(SESSION.session, {});
    expect(session.account?.id).toBe(tenant.accountId);

    const again = new Viewer();
    await again.call(SESSION.signIn, {
      body: { email: 'routes.session@example.com', password: PASSWORD },
    });
    await again.call(SESSION.session, {});
    await again.call(SESSION.signOut, {});
  });

  it("serves an owner's overview, keys, scoped tokens, usage, alerts and statement", async () => {
    const owner = await signedInOwner('routes.owner@example.com');
    await owner.call(OWNER.overview, {});
    await owner.call(OWNER.createApiKey, { body: { name: 'routes' } });
    await owner.call(OWNER.apiKeys, {});
    await owner.call(OWNER.regenerateApiKey, { params: { name: 'routes' } });
    await owner.call(OWNER.deleteApiKey, { params: { name: 'routes' } });

    await owner.call(OWNER.createScopedToken, { body: { api_key_name: 'auto' } });
    const tokens = await owner.call(OWNER.scopedTokens, {
      query: new URLSearchParams({ limit: '5' }),
    });
    await owner.call(OWNER.revokeScopedToken, { params: { id: tokens.data[0]!.id } });

    const requestId = await tenantRequest('job-routes-1');
    await owner.call(OWNER.usage, { query: new URLSearchParams({ group_by: 'day,model' }) });
    const log = await owner.call(OWNER.usageRequests, { query: RANGE });
    expect(log.data).toHaveLength(1);
    await owner.call(OWNER.receipt, { params: { requestId } });

    const alerts = { url: 'https://hooks.example.com/alerts', balance_below_dzd: 1 };
    await owner.call(OWNER.putAlerts, { body: alerts });
    await owner.call(OWNER.alerts, {});
    await owner.call(OWNER.removeAlerts, {});

    const statement = await owner.call(OWNER.statement, { query: RANGE });
    expect(statement.account_id).toBe(tenant.accountId);
  });

  it("serves an owner's webhooks", async () => {
    const owner = await signedInOwner('routes.webhooks@example.com');
    await owner.call(OWNER.webhookSecrets, {});
    await owner.call(OWNER.revealWebhookSecrets, {});
    await owner.call(OWNER.rotateWebhookSecret, {});
    await owner.call(OWNER.expirePreviousWebhookSecret, {});
    await owner.call(OWNER.putWebhookSettings, { body: { webhook_format: 'B' } });
    await owner.call(OWNER.webhookSettings, {});

    const deliveryId = await deliveredWebhook();
    await owner.call(OWNER.webhookDeliveries, {});
    await owner.call(OWNER.redeliverWebhook, { params: { id: deliveryId } });
  });

  it("serves an owner's and an operator's budgets and rate limits", async () => {
    const owner = await signedInOwner('routes.settings@example.com');
    const operator = await signedInStaff('routes.settings.ops@example.com', 'operator');
    await owner.call(OWNER.createScopedToken, { body: { api_key_name: 'auto' } });
    const id = tenant.accountId;
    const tokens = await operator.call(DASHBOARD_ACCOUNT_ROUTES.scopedTokens, { params: { id } });
    const key = { id, name: 'auto' };
    const token = { id, tokenId: tokens.data[0]!.id };

    const B = DASHBOARD_BUDGET_ROUTES;
    const budget = { limit_dzd: 5, period: 'day' } as const;
    await owner.call(B.putOwnKey, { params: { name: 'auto' }, body: budget });
    await owner.call(B.listOwn, {});
    await owner.call(B.removeOwnKey, { params: { name: 'auto' } });
    await operator.call(B.putAccountKey, { params: key, body: budget });
    await operator.call(B.putAccountToken, { params: token, body: budget });
    await operator.call(B.listOfAccount, { params: { id } });
    await operator.call(B.removeAccountKey, { params: key });
    await operator.call(B.removeAccountToken, { params: token });

    const L = DASHBOARD_RATE_LIMIT_ROUTES;
    const limit = { requests_per_minute: 10 };
    await owner.call(L.putOwnKey, { params: { name: 'auto' }, body: limit });
    await owner.call(L.listOwn, {});
    await owner.call(L.removeOwnKey, { params: { name: 'auto' } });
    await operator.call(L.putAccountKey, { params: key, body: limit });
    await operator.call(L.putAccountToken, { params: token, body: { tokens_per_minute: 1000 } });
    await operator.call(L.listOfAccount, { params: { id } });
    await operator.call(L.removeAccountKey, { params: key });
    await operator.call(L.removeAccountToken, { params: token });
  });

  it("serves the operators' accounts, catalog, ledger and usage", async () => {
    const operator = await signedInStaff('routes.ops@example.com', 'operator');
    const created = await operator.call(OPERATOR.createAccount, { body: { name: 'Routes' } });
    const params = { id: created.id };
    await operator.call(OPERATOR.accounts, { query: new URLSearchParams({ q: 'Routes' }) });
    await operator.call(OPERATOR.account, { params });
    await operator.call(OPERATOR.patchAccount, { params, body: { rate_limit_per_minute: 120 } });
    await operator.call(OPERATOR.suspend, { params });
    await operator.call(OPERATOR.unsuspend, { params });
    await operator.call(OPERATOR.credit, {
      params,
      body: { amount_dzd: 5, reference: 'routes' },
      headers: { 'Idempotency-Key': 'routes-credit-1' },
    });
    await operator.call(OPERATOR.invite, { params, body: { email: 'routes.new@example.com' } });
    await operator.call(OPERATOR.statement, { params, query: RANGE });
    await operator.call(OPERATOR.webhookDeliveries, { params: { id: tenant.accountId } });
    const holds = await operator.call(OPERATOR.openHolds, { params: { id: tenant.accountId } });
    expect(holds).toMatchObject({ object: 'list', has_more: false });

    const model = await operator.call(OPERATOR.putModel, {
      params: { model: 'acme/routes' },
      body: {
        kind: 'chat',
        provider: 'node',
        upstream_model: 'routes',
        input_price_dzd_per_m: 100,
        output_price_dzd_per_m: 300,
        max_output_tokens: 1000,
        nodes: [{ url: 'http://127.0.0.1:9' }],
      },
    });
    expect(model.id).toBe('acme/routes');
    await operator.call(OPERATOR.models, {});

    await operator.call(OPERATOR.ledgerEntries, {
      query: new URLSearchParams({ account: created.id }),
    });
    await operator.call(OPERATOR.ledgerCheck, {});
    await operator.call(OPERATOR.usage, { query: new URLSearchParams({ group_by: 'model' }) });
    await operator.call(OPERATOR.usageRequests, { query: RANGE });
  });

  it("serves finance's books", async () => {
    const finance = await signedInStaff('routes.finance@example.com', 'finance');
    await finance.call(FINANCE.report, {
      query: new URLSearchParams({ from: '2025-01-01', to: '2025-01-31' }),
    });
    await finance.call(FINANCE.closePeriod, { params: { period: '2025-01' } });
    await finance.call(FINANCE.periods, {});
  });

  it('has called every route of the tables', () => {
    const missed = Object.entries(TABLES).flatMap(([table, routes]) =>
      agreement.missed(Object.values(routes)).map((route) => `${table}: ${route}`),
    );
    expect(missed).toEqual([]);
  });
});
