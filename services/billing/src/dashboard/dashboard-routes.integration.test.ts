import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BILLING_DASHBOARD_PREFIX,
  BILLING_DASHBOARD_ROUTES as R,
  type Route,
  type RouteAnswer,
  type RouteInput,
} from '@gateway/contracts';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import { startBillingApi, type BillingApiUnderTest } from '../http/billing-api.suite.js';
import {
  RouteAgreement,
  routeRequest,
} from '../../../../packages/testing/src/route-agreement.suite.js';

/*
 * Billing's dashboard API contract (`BILLING_DASHBOARD_ROUTES`) agrees with what billing serves:
 * every route is called here with a request its body schema accepts, answers with the route's
 * status, and its answer passes the route's answer schema. A route added to the table without a
 * call here fails the last test.
 */

let billing: BillingApiUnderTest;
const agreement = new RouteAgreement();
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  billing = await startBillingApi();
});

afterAll(async () => {
  await billing?.close();
});

/** Calls one route as edge does; checks its status and its answer's schema. */
async function call<Called extends Route>(
  route: Called,
  input: RouteInput<Called>,
): Promise<RouteAnswer<Called>> {
  const sent = routeRequest(billing.api, BILLING_DASHBOARD_PREFIX, route, input);
  return agreement.answerOf(route, sent.set(INTERNAL_TOKEN_HEADER, billing.internalToken));
}

async function newAccount(): Promise<string> {
  const account = await billing.call('post', '/admin/accounts').send({ name: 'Dashboard' });
  expect(account.status).toBe(201);
  return account.body.id as string;
}

/** An account with an invitation for `email` (the operator API's): its id and the token. */
async function invitedAccount(email: string): Promise<{ id: string; token: string }> {
  const id = await newAccount();
  const invited = await billing.call('post', `/admin/accounts/${id}/invitations`).send({ email });
  expect(invited.status).toBe(201);
  return { id, token: invited.body.token as string };
}

/** A scoped token of the account, signed by a new key: its raw token. */
async function scopedToken(accountId: string): Promise<string> {
  const key = await billing.call('post', `/admin/accounts/${accountId}/api-keys`).send({
    name: 'k',
  });
  expect(key.status).toBe(201);
  const token = await billing
    .call('post', `/accounts/${accountId}/scoped-tokens`)
    .send({ api_key_name: 'k', expires_delta: 3600 });
  expect(token.status).toBe(201);
  return token.body.token as string;
}

describe("billing's dashboard API contract, against billing", () => {
  it('serves sign-in, sessions and invitation acceptance', async () => {
    const email = 'owner@example.com';
    const invitation = await invitedAccount(email);
    await call(R.acceptInvitation, { body: { token: invitation.token, password: PASSWORD } });
    const started = await call(R.signIn, { body: { email, password: PASSWORD } });
    const session = await call(R.resolveSession, { body: { token: started.token } });
    expect(session.account?.id).toBe(invitation.id);
    await call(R.endSession, { body: { token: started.token } });
  });

  it("serves an owner's overview and scoped tokens", async () => {
    const id = await newAccount();
    await scopedToken(id);
    await call(R.overview, { params: { id } });
    const page = await call(R.scopedTokens, {
      params: { id },
      query: new URLSearchParams({ limit: '5' }),
    });
    expect(page.data).toHaveLength(1);
    const revoked = await call(R.revokeScopedToken, { params: { id, tokenId: page.data[0]!.id } });
    expect(revoked.state).toBe('revoked');
  });

  it('has called every route of the table', () => {
    expect(agreement.missed(Object.values(R))).toEqual([]);
  });
});
