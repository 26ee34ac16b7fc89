import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  spawnService,
  testAmqpUrl,
  uniquePrefix,
  waitForStatus,
  type ServiceProcess,
  type TestDatabase,
} from '@gateway/testing';
import { createBillingDatabase } from '../../billing/src/testing/billing-under-test.suite.js';
import { waitFor } from './testing/wait.suite.js';

/**
 * Two edge processes (built, as deployed) in front of one billing process: the account's rate
 * limit and the dashboard's sign-ins per email are counted in billing, so they hold across both.
 */

const entry = (service: string) => path.resolve('services', service, 'dist', 'main.js');
const SIGN_IN_LIMIT = 10;
const internalToken = randomBytes(32).toString('hex');
const adminToken = randomBytes(32).toString('hex');

let db: TestDatabase;
let billing: ServiceProcess;
const edges: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createBillingDatabase();
  const prefix = uniquePrefix('two-edges');
  billing = await spawnService({
    entry: entry('billing'),
    env: {
      AMQP_URL: testAmqpUrl(),
      AMQP_PREFIX: prefix,
      DATABASE_URL: db.runtimeUrl,
      EDGE_INTERNAL_TOKEN: internalToken,
      WORKER_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
      MASTER_KEY: randomBytes(32).toString('base64'),
      DASHBOARD_SIGN_IN_FAILURES_PER_HOUR: String(SIGN_IN_LIMIT),
      // Every sign-in of a wave is checked (none refused for a full bulkhead): only the limit
      // per email may refuse here.
      DASHBOARD_PASSWORD_HASH_QUEUE: '32',
    },
  });
  for (let i = 0; i < 2; i += 1) {
    const edge = await spawnService({
      entry: entry('edge'),
      env: {
        AMQP_URL: testAmqpUrl(),
        AMQP_PREFIX: prefix,
        BILLING_URL: billing.baseUrl,
        BILLING_INTERNAL_TOKEN: internalToken,
        ADMIN_TOKEN: adminToken,
        DISPATCHER_URL: 'http://127.0.0.1:9',
        DISPATCHER_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
      },
    });
    edges.push(edge);
    await waitForStatus(`${edge.baseUrl}/readyz`, 200);
  }
});

afterAll(async () => {
  await Promise.all(edges.map((edge) => edge.stop('SIGTERM')));
  await billing?.stop('SIGTERM');
  await db?.drop();
});

async function adminCall(method: string, route: string, body?: object) {
  const response = await fetch(`${edges[0]!.baseUrl}/admin/v1${route}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await response.json()) as Record<string, string>;
}

describe('two edges, one billing', () => {
  it("holds the account's rate limit across both (accepted ≤ limit)", async () => {
    const LIMIT = 10;
    const account = await adminCall('POST', '/accounts', { name: 'Busy' });
    await adminCall('PATCH', `/accounts/${account.id}`, { rate_limit_per_minute: LIMIT });
    const { key } = await adminCall('POST', `/accounts/${account.id}/api-keys`, { name: 'auto' });

    // The limit is per clock minute: a burst that straddles a minute's end may use two windows'
    // limits. Start it well inside one.
    const msLeftInMinute = 60_000 - (Date.now() % 60_000);
    if (msLeftInMinute < 10_000)
      await new Promise((done) => setTimeout(done, msLeftInMinute + 100));
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${edges[i % 2]!.baseUrl}/v1/user/balance`, {
          headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': `burst-${i}` },
        }),
      ),
    );
    const accepted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(accepted.length).toBeLessThanOrEqual(LIMIT);
    // Within one window (a minute boundary may split the burst) the limit is used fully.
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length + refused.length).toBe(30);
    for (const response of refused) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(response.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'rate_limit_exceeded',
      );
    }
    // Both edges answered some of the burst, and each logged the requests with their ids.
    const burstIds = (edge: ServiceProcess) =>
      edge.logs
        .map((line) => (line.req as { id?: string } | undefined)?.id)
        .filter((id) => id?.startsWith('burst-'));
    // Log lines arrive through the child's stdout a little after the answers.
    await waitFor(() => edges.every((edge) => burstIds(edge).length === 15));
  });

  it('checks no more wrong passwords per email than the limit, concurrently through both', async () => {
    const account = await adminCall('POST', '/accounts', { name: 'Owned' });
    const invitation = await adminCall('POST', `/accounts/${account.id}/invitations`, {
      email: 'waves@example.com',
    });
    const password = 'the right password, long';
    const accepted = await fetch(`${edges[0]!.baseUrl}/dashboard/api/invitations/accept`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: invitation.token, password }),
    });
    expect(accepted.status).toBe(200);
    const signIn = (i: number, tried: string) =>
      fetch(`${edges[i % 2]!.baseUrl}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'waves@example.com', password: tried }),
      });
    // Two waves at once, split over both edges: 8 then 7 wrong passwords; the right one alone
    // after them (inside a wave it may take a last point first: a right password gives its
    // point back, and signs in).
    const statuses: number[] = [];
    for (const size of [8, 7]) {
      const wave = Array.from({ length: size }, (_, i) => signIn(i, 'a wrong password!'));
      statuses.push(...(await Promise.all(wave)).map((answer) => answer.status));
    }
    statuses.push((await signIn(1, password)).status);
    // Exactly the limit checked (401), the rest refused unchecked (429), the right one included.
    expect(statuses.filter((status) => status === 401)).toHaveLength(SIGN_IN_LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(16 - SIGN_IN_LIMIT);
    expect(statuses[15]).toBe(429);
    const again = await signIn(0, password);
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(3_000);
  });
});
