import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { GatewayError } from '@gateway/contracts';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { AuthFailureLimiter, KnownCredentials, clientKey } from './auth.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/** Failed authentication is limited per client address. */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenant: FundedAccount;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { authFailuresPerMinute: 3 });
  tenant = await fundAccount(billing.operator, { creditDzd: 1 });
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

const guess = (i: number) => bearer(`sk_live_${String(i).padStart(43, 'x')}`);
const authenticateCalls = () => billing.paths.filter((p) => p === '/internal/v1/authenticate');

describe('failed authentication per client address', () => {
  it('answers 429 without asking billing once an address used up its failures; a credential accepted lately still goes through', async () => {
    // Before the limit, a valid key works and does not count; it is now known to this edge.
    expect((await edge.api.get('/v1/user/balance').set(bearer(tenant.apiKey))).status).toBe(200);
    const failures = [
      await edge.api.get('/v1/user/balance').set(guess(0)),
      await edge.api.get('/v1/models'),
      await edge.api.get('/admin/v1/accounts').set(bearer('not-the-admin-token')),
    ];
    expect(failures.map((r) => r.status)).toEqual([401, 401, 401]);
    // Past the limit: guesses on any route are 429 and billing hears of none of them.
    const asked = authenticateCalls().length;
    const past = [
      await edge.api.get('/v1/user/balance').set(guess(1)),
      await edge.api.get('/v1/models').set(guess(2)),
      await edge.api.post('/v1/chat/completions').set(guess(3)).send({ model: 'x', messages: [] }),
      await edge.api.get('/admin/v1/accounts').set(bearer('still-not-the-admin-token')),
    ];
    for (const limited of past) {
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('rate_limit_exceeded');
      expect(limited.body.error.message).toMatch(/failed authentication/);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(authenticateCalls().length).toBe(asked);
    // The customer's key, accepted a moment ago, is still served from the tripped address.
    const served = await edge.api.get('/v1/user/balance').set(bearer(tenant.apiKey));
    expect(served.status).toBe(200);
    // A key this edge has not seen accepted waits for the window, like any other credential.
    const other = await fundAccount(billing.operator, { creditDzd: 1 });
    expect((await edge.api.get('/v1/user/balance').set(bearer(other.apiKey))).status).toBe(429);
    expect((await edge.api.get('/admin/v1/accounts').set(bearer(edge.adminToken))).status).toBe(
      429,
    );
  });

  it('takes X-Forwarded-For only from a trusted proxy', async () => {
    const proxied = await startEdge(billing, {
      authFailuresPerMinute: 2,
      trustedProxies: ['loopback'],
    });
    const direct = await startEdge(billing, { authFailuresPerMinute: 2 });
    try {
      const from = (api: EdgeUnderTest, address: string, credential: Record<string, string>) =>
        api.api.get('/v1/user/balance').set('X-Forwarded-For', address).set(credential);
      // Behind the trusted proxy: the guesser's address trips, another client's does not.
      expect((await from(proxied, '203.0.113.7', guess(10))).status).toBe(401);
      expect((await from(proxied, '203.0.113.7', guess(11))).status).toBe(401);
      expect((await from(proxied, '203.0.113.7', guess(12))).status).toBe(429);
      const fresh = await fundAccount(billing.operator, { creditDzd: 1 });
      expect((await from(proxied, '198.51.100.9', bearer(fresh.apiKey))).status).toBe(200);
      // Addresses a client writes into the header itself change nothing: the rightmost one
      // that is not a trusted proxy is the client.
      expect((await from(proxied, '198.51.100.9, 203.0.113.7', guess(13))).status).toBe(429);
      // Not trusted: the header is ignored, rotating it does not escape the limit.
      expect((await from(direct, '192.0.2.1', guess(20))).status).toBe(401);
      expect((await from(direct, '192.0.2.2', guess(21))).status).toBe(401);
      expect((await from(direct, '192.0.2.3', guess(22))).status).toBe(429);
    } finally {
      await proxied.close();
      await direct.close();
    }
  });

  it('lets no more concurrent sign-ins from one address reach billing than its points', async () => {
    const strict = await startEdge(billing, { authFailuresPerMinute: 3 });
    try {
      const before = billing.paths.filter((p) => p === '/internal/v1/dashboard/sessions').length;
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          strict.api
            .post('/dashboard/api/session')
            .send({ email: `nobody${i}@example.com`, password: 'a wrong password!' }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([...Array<number>(3).fill(401), ...Array<number>(9).fill(429)]);
      const after = billing.paths.filter((p) => p === '/internal/v1/dashboard/sessions').length;
      expect(after - before).toBe(3);
    } finally {
      await strict.close();
    }
  });
});

describe('the limiter', () => {
  const request = (ip: string, authorization?: string) =>
    ({
      ip,
      get: (name: string) => (name.toLowerCase() === 'authorization' ? authorization : undefined),
    }) as unknown as Request;

  it('takes points atomically and gives them back', async () => {
    const limiter = new AuthFailureLimiter({ failuresPerMinute: 5 });
    const taken = await Promise.allSettled(
      Array.from({ length: 20 }, () => limiter.take(request('10.0.0.1'))),
    );
    const granted = taken.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    expect(granted).toHaveLength(5);
    const refusal = taken.find((t) => t.status === 'rejected')?.reason as GatewayError;
    expect(refusal.code).toBe('rate_limit_exceeded');
    expect(refusal.details?.retryAfterS).toBeGreaterThan(0);
    // Another address is unaffected.
    await expect(limiter.take(request('10.0.0.2'))).resolves.toBeInstanceOf(Function);
    // Refused attempts counted too: giving back the granted points leaves the address limited
    // until its refused attempts are forgotten with the window.
    for (const giveBack of granted) await giveBack();
    await expect(limiter.take(request('10.0.0.1'))).rejects.toBeInstanceOf(GatewayError);
  });

  it('remembers accepted credentials as digests, boundedly and for a while', () => {
    let now = 0;
    const known = new KnownCredentials(2, 1_000, () => now);
    known.add('key-a');
    known.add('key-b');
    known.add('key-a'); // refreshed: key-b is now the least recent
    known.add('key-c');
    expect([known.has('key-a'), known.has('key-b'), known.has('key-c')]).toEqual([
      true,
      false,
      true,
    ]);
    expect(known.size).toBe(2);
    now = 999;
    expect(known.has('key-a')).toBe(true);
    now = 1_000;
    expect(known.has('key-a')).toBe(false);
    known.add('key-d');
    known.forget('key-d');
    expect(known.has('key-d')).toBe(false);
  });

  it('forgets a credential billing refused', async () => {
    const limiter = new AuthFailureLimiter({ failuresPerMinute: 1 });
    const req = request('10.0.0.9', 'Bearer sk_live_revoked');
    limiter.accepted(req);
    await limiter.countFailure(req, new GatewayError('invalid_api_key', 'gone'));
    const refused = await new Promise<unknown>((resolve) => {
      void limiter.guard(req, { locals: {} } as never, resolve);
    });
    expect((refused as GatewayError).code).toBe('rate_limit_exceeded');
  });
});

describe('client key', () => {
  it('counts IPv6 clients by their /64 and IPv4-mapped clients by their IPv4 address', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(clientKey('10.0.0.7')).toBe('10.0.0.7');
    expect(clientKey(undefined)).toBe('unknown');
  });
});
