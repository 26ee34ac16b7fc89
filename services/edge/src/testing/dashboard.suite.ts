import { expect } from '@jest/globals';
import type { Response } from 'supertest';
import { DASHBOARD_CSRF_HEADER, type DashboardSession } from '@gateway/contracts';
import type { EdgeUnderTest } from './edge.suite.js';
import { type FundedAccount } from '@gateway/testing';

/** The dashboard's API as a browser uses it, for the tests of `/dashboard/api`. */

export const ORIGIN = 'http://127.0.0.1:8080';
export const PASSWORD = 'correct horse battery';
/** Edge's dashboard settings the tests run with (the origin above, plain HTTP on loopback). */
export const TEST_DASHBOARD = {
  publicBaseUrl: ORIGIN,
  insecureLoopbackCookie: true,
};

export type DashboardMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A browser: its session cookie and CSRF token, sent the way the single-page app sends them. */
export class Browser {
  cookie = '';
  csrf = '';

  constructor(private readonly edge: EdgeUnderTest) {}

  take(response: { headers: Record<string, unknown>; body: DashboardSession }) {
    const setCookie = (response.headers['set-cookie'] as string[] | undefined)?.[0] ?? '';
    this.cookie = setCookie.split(';')[0] ?? '';
    this.csrf = response.body.csrf_token;
    return response;
  }

  send(method: DashboardMethod, path: string, options: { csrf?: boolean } = {}) {
    let call = this.edge.api[method](`/dashboard/api${path}`).set('Cookie', this.cookie);
    if (method !== 'get') call = call.set('Origin', ORIGIN);
    if (method !== 'get' && options.csrf !== false) {
      call = call.set(DASHBOARD_CSRF_HEADER, this.csrf);
    }
    return call;
  }
}

export const adminAuth = (edge: EdgeUnderTest) => ({ Authorization: `Bearer ${edge.adminToken}` });

export async function invite(edge: EdgeUnderTest, accountId: string, email: string) {
  const response = await edge.api
    .post(`/admin/v1/accounts/${accountId}/invitations`)
    .set(adminAuth(edge))
    .send({ email });
  expect(response.status).toBe(201);
  expect(response.body.url).toBe(
    `${ORIGIN}/dashboard/invitation#token=${encodeURIComponent(response.body.token as string)}`,
  );
  return response.body.token as string;
}

/** The account's owner, signed in through a fresh invitation. */
export async function ownerOf(edge: EdgeUnderTest, tenant: FundedAccount, email: string) {
  const token = await invite(edge, tenant.accountId, email);
  const browser = new Browser(edge);
  const accepted = await edge.api
    .post('/dashboard/api/invitations/accept')
    .set('Origin', ORIGIN)
    .send({ token, password: PASSWORD });
  expect(accepted.status).toBe(200);
  browser.take(accepted);
  return browser;
}

export async function signIn(
  edge: EdgeUnderTest,
  email: string,
  password = PASSWORD,
  realm?: 'owner' | 'operator',
): Promise<{ browser: Browser; response: Response }> {
  const browser = new Browser(edge);
  const response = await edge.api
    .post('/dashboard/api/session')
    .set('Origin', ORIGIN)
    .send({ email, password, ...(realm ? { realm } : {}) });
  if (response.status === 200) browser.take(response);
  return { browser, response };
}

/** An operator user of the role (created with the admin token), signed in. */
export async function operatorOf(edge: EdgeUnderTest, email: string, role: 'operator' | 'finance') {
  const created = await edge.api
    .post('/admin/v1/operator-users')
    .set(adminAuth(edge))
    .send({ email, role, password: PASSWORD });
  expect(created.status).toBe(201);
  expect(created.body).not.toHaveProperty('password_hash');
  const { browser, response } = await signIn(edge, email, PASSWORD, 'operator');
  expect(response.body).toMatchObject({ user: { role }, account: null });
  return browser;
}
