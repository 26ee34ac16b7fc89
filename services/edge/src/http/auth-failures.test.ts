import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTenant,
  startBilling,
  type BillingUnderTest,
  type Tenant,
} from '../test-support/billing.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../test-support/edge.suite.js';
import { clientKey } from './auth-failures.js';

/** Failed authentication is limited per client address (issue 13, item 6). */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenant: Tenant;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { authFailuresPerMinute: 3 });
  tenant = await createTenant(billing, { creditDzd: 1 });
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

describe('failed authentication per client address', () => {
  it('answers 429 with Retry-After once an address used up its failures, valid key or not', async () => {
    // Before the limit, a valid key works and does not count.
    expect((await edge.api.get('/v1/user/balance').set(bearer(tenant.key))).status).toBe(200);
    const failures = [
      await edge.api.get('/v1/user/balance').set(bearer(`sk_live_${'x'.repeat(43)}`)),
      await edge.api.get('/v1/models'),
      await edge.api.get('/admin/v1/accounts').set(bearer('not-the-admin-token')),
    ];
    expect(failures.map((r) => r.status)).toEqual([401, 401, 401]);
    const limited = await edge.api.get('/v1/user/balance').set(bearer(tenant.key));
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(limited.body.error.message).toMatch(/failed authentication/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const admin = await edge.api.get('/admin/v1/accounts').set(bearer(edge.adminToken));
    expect(admin.status).toBe(429);
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
