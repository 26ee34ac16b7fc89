import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { DASHBOARD_CSRF_HEADER } from '@gateway/contracts';
import {
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  ORIGIN,
  PASSWORD,
  adminAuth,
  invite as inviteOwner,
  ownerOf as signedInOwner,
  signIn as signInAs,
} from '../testing/dashboard.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { cookieMustBeSecure } from './session-cookie.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/** The dashboard's API through edge, against the real billing (sessions, keys, operators). */

const IDLE_MS = 5 * 60_000;
const MAX_MS = 60 * 60_000;

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenantA: FundedAccount;
let tenantB: FundedAccount;
// The dashboard's clock: tests move it to end sessions.
let offsetMs = 0;

beforeAll(async () => {
  billing = await startBilling({
    dashboard: {
      clock: () => new Date(Date.now() + offsetMs),
      session: { idleMs: IDLE_MS, maxMs: MAX_MS },
      // Sign-ins per email and hour (billing's DASHBOARD_SIGN_IN_FAILURES_PER_HOUR).
      signInFailuresPerHour: 3,
    },
  });
  edge = await startEdge(billing, {
    dashboard: { publicBaseUrl: ORIGIN, insecureLoopbackCookie: true },
  });
  tenantA = await fundAccount(billing.operator, { creditDzd: 10 });
  tenantB = await fundAccount(billing.operator, { creditDzd: 10 });
  await putModel(billing, 'acme/chat');
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

const admin = () => adminAuth(edge);
const invite = (accountId: string, email: string) => inviteOwner(edge, accountId, email);
const ownerOf = (tenant: FundedAccount, email: string) => signedInOwner(edge, tenant, email);
const signIn = (email: string, password = PASSWORD, realm?: 'owner' | 'operator') =>
  signInAs(edge, email, password, realm);

async function chat(key: string) {
  return edge.api
    .post('/v1/chat/completions')
    .set(bearer(key))
    .send({ model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] });
}

describe('invitation, session and API keys', () => {
  it('accepts an invitation once, then signs in; the cookie is httpOnly and SameSite=Strict', async () => {
    const token = await invite(tenantA.accountId, 'Owner.A@example.com');
    const weak = await edge.api
      .post('/dashboard/api/invitations/accept')
      .set('Origin', ORIGIN)
      .send({ token, password: 'short' });
    expect(weak.status).toBe(400);

    const accepted = await edge.api
      .post('/dashboard/api/invitations/accept')
      .set('Origin', ORIGIN)
      .send({ token, password: PASSWORD });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      user: { email: 'owner.a@example.com', role: 'owner' },
      account: { id: tenantA.accountId },
      idle_timeout_s: IDLE_MS / 1000,
    });
    const cookie = (accepted.headers['set-cookie'] as unknown as string[])[0]!;
    expect(cookie).toMatch(/^gw_session=[\w-]{43}; Max-Age=\d+; Path=\/dashboard; HttpOnly;/);
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).not.toContain('Secure'); // loopback development only (see the next test)

    const again = await edge.api
      .post('/dashboard/api/invitations/accept')
      .set('Origin', ORIGIN)
      .send({ token, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('invalid_invitation');

    const { browser, response } = await signIn('owner.a@example.com');
    expect(response.status).toBe(200);
    const me = await browser.send('get', '/session');
    expect(me.status).toBe(200);
    expect(me.body).toEqual(response.body);
    expect(me.headers['cache-control']).toBe('no-store');
  });

  it('marks the cookie Secure except over plain HTTP on loopback in development', () => {
    const req = (hostname: string, secure = false) => ({ hostname, secure }) as unknown as Request;
    expect(cookieMustBeSecure(req('127.0.0.1'), false)).toBe(true);
    expect(cookieMustBeSecure(req('localhost'), false)).toBe(true);
    expect(cookieMustBeSecure(req('127.0.0.1'), true)).toBe(false);
    expect(cookieMustBeSecure(req('localhost'), true)).toBe(false);
    expect(cookieMustBeSecure(req('[::1]'), true)).toBe(false);
    expect(cookieMustBeSecure(req('127.0.0.1', true), true)).toBe(true);
    expect(cookieMustBeSecure(req('gateway.example'), true)).toBe(true);
    expect(cookieMustBeSecure(req('127.evil.example'), true)).toBe(true);
    expect(cookieMustBeSecure(req('10.0.0.7'), true)).toBe(true);
  });

  // Outside loopback development the cookie carries the `__Host-` prefix, and
  // only that cookie is read (a plain-named cookie planted by a sibling host counts for nothing).
  it('uses a __Host- cookie (Secure, Path=/) wherever the cookie must be Secure', async () => {
    await ownerOf(tenantA, 'host.prefix@example.com');
    const signedIn = await edge.api
      .post('/dashboard/api/session')
      .set('Host', 'gateway.example')
      .set('Origin', ORIGIN)
      .send({ email: 'host.prefix@example.com', password: PASSWORD });
    expect(signedIn.status).toBe(200);
    const cookie = (signedIn.headers['set-cookie'] as unknown as string[])[0]!;
    expect(cookie).toMatch(/^__Host-gw_session=[\w-]{43}; Max-Age=\d+; Path=\/; HttpOnly; Secure;/);
    const token = /^__Host-gw_session=([\w-]+);/.exec(cookie)![1]!;
    const session = (name: string) =>
      edge.api
        .get('/dashboard/api/session')
        .set('Host', 'gateway.example')
        .set('Cookie', `${name}=${token}`);
    expect((await session('__Host-gw_session')).status).toBe(200);
    expect((await session('gw_session')).status).toBe(401);
  });

  it('shows the overview and creates, lists, regenerates and deletes keys, effective at once', async () => {
    const owner = await ownerOf(tenantA, 'keys.a@example.com');
    const overview = await owner.send('get', '/overview');
    expect(overview.status).toBe(200);
    expect(overview.body).toMatchObject({
      account: { id: tenantA.accountId, status: 'active' },
      currency: 'DZD',
      balance_dzd: 10,
      reserved_dzd: 0,
      available_dzd: 10,
      spend_today_dzd: 0,
      spend_month_dzd: 0,
    });

    const created = await owner.send('post', '/api-keys').send({ name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'ci', key: expect.stringMatching(/^sk_live_/) });
    const first = created.body.key as string;
    const listed = await owner.send('get', '/api-keys');
    expect(listed.body).toEqual({
      object: 'list',
      data: expect.arrayContaining([
        { name: 'ci', created_at: expect.any(String), last_used_at: null },
      ]),
    });

    expect((await edge.api.get('/v1/models').set(bearer(first))).status).toBe(200);
    const used = await pollUntil(async () => {
      const rows = (await owner.send('get', '/api-keys')).body.data as {
        name: string;
        last_used_at: string | null;
      }[];
      return rows.find((r) => r.name === 'ci')?.last_used_at ?? null;
    });
    expect(Date.parse(used)).toBeGreaterThan(Date.now() - 60_000);

    const regenerated = await owner.send('post', '/api-keys/ci/regenerate');
    expect(regenerated.status).toBe(200);
    const second = regenerated.body.key as string;
    expect(second).not.toBe(first);
    const old = await chat(first);
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('invalid_api_key');
    expect((await edge.api.get('/v1/models').set(bearer(second))).status).toBe(200);

    expect((await owner.send('delete', '/api-keys/ci')).status).toBe(204);
    const deleted = await chat(second);
    expect(deleted.status).toBe(401);
    expect(deleted.body.error.code).toBe('invalid_api_key');
    expect((await owner.send('delete', '/api-keys/ci')).status).toBe(404);
  });

  it('signs out: the session no longer works', async () => {
    const { browser } = await signIn('owner.a@example.com');
    expect((await browser.send('delete', '/session')).status).toBe(204);
    const after = await browser.send('get', '/session');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('session_required');
    expect((await edge.api.get('/dashboard/api/overview')).status).toBe(401);
  });

  it('ends sessions after the idle timeout and at the absolute expiry', async () => {
    const idle = (await signIn('owner.a@example.com')).browser;
    offsetMs += IDLE_MS + 1_000;
    expect((await idle.send('get', '/session')).body.error.code).toBe('session_required');

    const busy = (await signIn('owner.a@example.com')).browser;
    for (let used = 0; used < MAX_MS; used += IDLE_MS - 60_000) {
      offsetMs += IDLE_MS - 60_000;
      const status = (await busy.send('get', '/overview')).status;
      expect(status).toBe(used + IDLE_MS - 60_000 < MAX_MS ? 200 : 401);
    }
    offsetMs += 60_000;
    expect((await busy.send('get', '/session')).status).toBe(401);
  });
});

describe('CSRF', () => {
  it('refuses state changes without the session token or from another origin', async () => {
    const { browser } = await signIn('owner.a@example.com');
    const missing = await browser.send('post', '/api-keys', { csrf: false }).send({ name: 'x' });
    expect(missing.status).toBe(403);
    expect(missing.body.error).toMatchObject({ code: 'csrf_failed', type: 'service_error' });
    const wrong = await browser
      .send('post', '/api-keys', { csrf: false })
      .set(DASHBOARD_CSRF_HEADER, `${browser.csrf}x`)
      .send({ name: 'x' });
    expect(wrong.status).toBe(403);
    const foreign = await browser.send('delete', '/session').set('Origin', 'https://evil.example');
    expect(foreign.status).toBe(403);
    const signInFromElsewhere = await edge.api
      .post('/dashboard/api/session')
      .set('Origin', 'https://evil.example')
      .send({ email: 'owner.a@example.com', password: PASSWORD });
    expect(signInFromElsewhere.status).toBe(403);
    expect((await browser.send('get', '/session')).status).toBe(200);
    const keys = (await browser.send('get', '/api-keys')).body.data as { name: string }[];
    expect(keys.map((k) => k.name)).not.toContain('x');
  });
});

describe('sign-in rate limits', () => {
  it('limits failed sign-ins per email, correct password included, without saying why', async () => {
    await ownerOf(tenantB, 'limited.b@example.com');
    const unknown = await signIn('nobody@example.com');
    const wrong = await signIn('limited.b@example.com', 'wrong password!!');
    expect(unknown.response.status).toBe(401);
    expect(wrong.response.status).toBe(401);
    expect(wrong.response.body).toEqual(unknown.response.body);
    expect(wrong.response.body.error.code).toBe('invalid_credentials');
    await signIn('limited.b@example.com', 'wrong password!!');
    await signIn('LIMITED.B@example.com', 'wrong password!!');
    const blocked = await signIn('limited.b@example.com');
    expect(blocked.response.status).toBe(429);
    expect(blocked.response.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(blocked.response.headers['retry-after'])).toBeGreaterThan(0);
    expect((await signIn('owner.a@example.com')).response.status).toBe(200);
  });

  it('limits failed sign-ins per client address', async () => {
    const strict = await startEdge(billing, {
      authFailuresPerMinute: 2,
      dashboard: { publicBaseUrl: ORIGIN, insecureLoopbackCookie: true },
    });
    try {
      const attempt = (email: string, password = 'wrong password!!') =>
        strict.api.post('/dashboard/api/session').set('Origin', ORIGIN).send({ email, password });
      expect((await attempt('a@example.com')).status).toBe(401);
      expect((await attempt('b@example.com')).status).toBe(401);
      const blocked = await attempt('owner.a@example.com', PASSWORD);
      expect(blocked.status).toBe(429);
    } finally {
      await strict.close();
    }
  });
});

describe('isolation and roles', () => {
  it('keeps an owner inside their own account whatever the request says', async () => {
    const owner = await ownerOf(tenantA, 'isolated.a@example.com');
    const smuggled = await owner
      .send('post', '/api-keys')
      .send({ name: 'mine', account_id: tenantB.accountId });
    expect(smuggled.status).toBe(400);
    const overview = await owner.send('get', `/overview?account=${tenantB.accountId}`);
    expect(overview.body.account.id).toBe(tenantA.accountId);
    for (const path of [
      `/operator/accounts/${tenantB.accountId}`,
      '/operator/accounts',
      `/accounts/${tenantB.accountId}/api-keys`,
    ]) {
      expect([403, 404]).toContain((await owner.send('get', path)).status);
    }
    const credit = await owner
      .send('post', `/operator/accounts/${tenantA.accountId}/credits`)
      .set('Idempotency-Key', 'self-credit')
      .send({ amount_dzd: 100, reference: 'free money' });
    expect(credit.status).toBe(403);
    // Both accounts have a key named `auto`: deleting "auto" deletes the owner's own only.
    expect((await owner.send('delete', '/api-keys/auto')).status).toBe(204);
    expect((await edge.api.get('/v1/models').set(bearer(tenantB.apiKey))).status).toBe(200);
    expect((await edge.api.get('/v1/models').set(bearer(tenantA.apiKey))).status).toBe(401);
  });

  it('lets operators search and credit (idempotently), and finance only read', async () => {
    for (const [email, role] of [
      ['ops@example.com', 'operator'],
      ['finance@example.com', 'finance'],
    ]) {
      const created = await edge.api
        .post('/admin/v1/operator-users')
        .set(admin())
        .send({ email, role, password: PASSWORD });
      expect(created.status).toBe(201);
      expect(created.body).not.toHaveProperty('password_hash');
    }
    expect((await signIn('ops@example.com')).response.status).toBe(401); // not an owner
    const ops = await signIn('ops@example.com', PASSWORD, 'operator');
    expect(ops.response.body).toMatchObject({ user: { role: 'operator' }, account: null });
    const operator = ops.browser;
    expect((await operator.send('get', '/overview')).status).toBe(403);

    const found = await operator.send('get', `/operator/accounts?q=${tenantB.accountId}`);
    expect(found.body).toEqual({
      object: 'list',
      data: [expect.objectContaining({ id: tenantB.accountId })],
      next_cursor: null,
    });
    const credit = () =>
      operator
        .send('post', `/operator/accounts/${tenantB.accountId}/credits`)
        .set('Idempotency-Key', 'wire-2027-001')
        .send({ amount_dzd: '2.5', reference: 'wire 2027-001' });
    const first = await credit();
    const second = await credit();
    expect(first.status).toBe(200);
    expect(second.body.transaction_id).toBe(first.body.transaction_id);
    expect(second.body.balance_dzd).toBe(12.5);
    const noKey = await operator
      .send('post', `/operator/accounts/${tenantB.accountId}/credits`)
      .send({ amount_dzd: 1, reference: 'x' });
    expect(noKey.status).toBe(400);

    const finance = (await signIn('finance@example.com', PASSWORD, 'operator')).browser;
    const detail = await finance.send('get', `/operator/accounts/${tenantB.accountId}`);
    expect(detail.body).toMatchObject({ id: tenantB.accountId, balance_dzd: 12.5 });
    const refused = await finance
      .send('post', `/operator/accounts/${tenantB.accountId}/credits`)
      .set('Idempotency-Key', 'finance-1')
      .send({ amount_dzd: 1, reference: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    const invite = await finance
      .send('post', `/operator/accounts/${tenantB.accountId}/invitations`)
      .send({ email: 'new.b@example.com' });
    expect(invite.status).toBe(403);
    expect(
      (await operator.send('get', `/operator/accounts/${tenantB.accountId}`)).body.balance_dzd,
    ).toBe(12.5);
  });

  it('lets role operator create an account (CSRF checked) and invite its owner; finance gets 403', async () => {
    for (const [email, role] of [
      ['creator@example.com', 'operator'],
      ['reader@example.com', 'finance'],
    ]) {
      await edge.api
        .post('/admin/v1/operator-users')
        .set(admin())
        .send({ email, role, password: PASSWORD })
        .expect(201);
    }
    const operator = (await signIn('creator@example.com', PASSWORD, 'operator')).browser;
    const finance = (await signIn('reader@example.com', PASSWORD, 'operator')).browser;
    const refused = await finance.send('post', '/operator/accounts').send({ name: 'by finance' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    const noCsrf = await operator
      .send('post', '/operator/accounts', { csrf: false })
      .send({ name: 'no csrf' });
    expect(noCsrf.body.error.code).toBe('csrf_failed');
    const owner = await signIn('owner.a@example.com');
    expect(
      (await owner.browser.send('post', '/operator/accounts').send({ name: 'x' })).status,
    ).toBe(403);
    const invalid = await operator.send('post', '/operator/accounts').send({ name: '' });
    expect(invalid.status).toBe(400);
    const smuggled = await operator
      .send('post', '/operator/accounts')
      .send({ name: 'x', rate_limit_per_minute: 1 });
    expect(smuggled.status).toBe(400);

    const created = await operator.send('post', '/operator/accounts').send({ name: 'Sahara Labs' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Sahara Labs', status: 'active' });
    const found = await operator.send('get', '/operator/accounts?q=sahara');
    expect(found.body.data).toEqual([expect.objectContaining({ id: created.body.id })]);
    for (const name of ['by finance', 'no csrf', 'x']) {
      const none = await operator.send('get', `/operator/accounts?q=${encodeURIComponent(name)}`);
      expect(none.body.data.filter((a: { name: string }) => a.name === name)).toEqual([]);
    }
    const invitation = await operator
      .send('post', `/operator/accounts/${created.body.id}/invitations`)
      .send({ email: 'owner@sahara.example' });
    expect(invitation.status).toBe(201);
    expect(invitation.body.url).toMatch(/\/dashboard\/invitation#token=/);
  });
});

async function pollUntil<T>(read: () => Promise<T | null>, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
