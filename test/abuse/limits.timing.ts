import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CHAT_MODEL,
  errorOf,
  settledHolds,
  startAbuseStack,
  type AbuseStack,
  type RawAnswer,
} from './abuse-stack.js';
import { fundAccount } from '@gateway/testing';

/*
 * A sign-in flood and the failed-authentication limit behind a proxy, against the deployed
 * shape (four processes, real PostgreSQL and RabbitMQ). A timing test (`pnpm test:timing`): it
 * runs alone, after the main run. Edge runs as behind the Kubernetes ingress: every connection
 * comes from one proxy (127.0.0.1, named in TRUSTED_PROXIES) and the client is the address that
 * proxy writes into X-Forwarded-For, so these tests speak for many clients from one machine.
 *
 * Before the fix: a flood of 400 sign-ins from one address got 21 × 401 and 379 × 503, none 429,
 * and a paying client's chat completion took 64.6 s instead of 23 ms; after 30 wrong keys from
 * one address, 20 more were still each checked by billing, and a valid key from that address
 * (behind the ingress: from anyone) got 429.
 */

const AUTH_FAILURES_PER_MINUTE = 30;
const FLOOD = 400;
/** Chat completions per measurement (at least): the nearest-rank p99 of 201 is the third slowest. */
const CHATS = 200;
const CHAT_CLIENTS = 2;

let stack: AbuseStack;
/** A funded account whose rate limit lets the measurements run (paying client). */
let payingKey: string;

beforeAll(async () => {
  stack = await startAbuseStack({
    authFailuresPerMinute: AUTH_FAILURES_PER_MINUTE,
    // Sign-ins at billing at once: as many as four edge replicas send with their default (4),
    // so that billing's own bulkhead (one hash at a time, four waiting) is tried too.
    edgeEnv: { TRUSTED_PROXIES: '127.0.0.1', DASHBOARD_SIGN_INS_IN_FLIGHT: '16' },
    // The deployed shape: the dashboard in its own edge process (k8s/base/edge-dashboard.yaml).
    dashboardProcess: true,
  });
  ({ apiKey: payingKey } = await fundAccount(stack.operator, {
    name: 'paying client',
    keyName: 'main',
    creditDzd: 5_000,
    credit: { reference: 'limits suite', idempotencyKey: 'limits-credit' },
    rateLimitPerMinute: 100_000,
  }));
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

const from = (address: string) => ({ 'X-Forwarded-For': address });
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

const chat = (key: string, address: string, timeoutMs = 30_000) =>
  stack.send({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { ...bearer(key), ...from(address), 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model: CHAT_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 1,
    }),
    timeoutMs,
  });

const signIn = (email: string, address: string) =>
  stack.sendDashboard({
    method: 'POST',
    path: '/dashboard/api/session',
    headers: { ...from(address), 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password: 'a wrong password, long' }),
    timeoutMs: 60_000,
  });

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * The paying client's chat completions, `CHAT_CLIENTS` at a time: at least `CHATS` of them and,
 * when `during` is given, until it settled too (so the sample spans the whole flood).
 */
async function chats(during?: Promise<unknown>): Promise<{ statuses: number[]; ms: number[] }> {
  let settled = during === undefined;
  void during?.finally(() => (settled = true));
  const statuses: number[] = [];
  const ms: number[] = [];
  const client = async () => {
    // Bounded: never more than 3 × CHATS in all, whatever the flood does.
    while ((statuses.length < CHATS || !settled) && statuses.length < 3 * CHATS) {
      const answer = await chat(payingKey, '198.51.100.10');
      statuses.push(answer.status);
      ms.push(answer.elapsedMs);
    }
  };
  await Promise.all(Array.from({ length: CHAT_CLIENTS }, client));
  return { statuses, ms };
}

const tally = (answers: RawAnswer[]) =>
  answers.reduce<Record<number, number>>(
    (all, { status }) => ({ ...all, [status]: (all[status] ?? 0) + 1 }),
    {},
  );

/** A counter of billing's /metrics (its lines carry the `service` label). */
async function billingMetric(name: string): Promise<number> {
  const text = await (await fetch(`${stack.processes.billing.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`billing has no metric ${name}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/**
 * The flood stalls no chat: p99 within 3x of the quiet p99 (floored at 20 ms, below which a
 * timer's granularity decides), and no chat near the minute the old code took (64.6 s).
 * Measured before the dashboard had its own process: one to three chats of 0.4-1.3 s in every
 * run (7 to 20 times the quiet p99), queued on edge's one event loop behind 400 sign-ins (about
 * 1 ms of edge's time each). Not a stall: billing's password hashes taking one of a 2-core
 * host's cores while they run, which doubles a chat's time on a host that other tenants load
 * too (the bound was 2x: 128 against 124 ms, and 103 against 98, failed CI runs of 2026-11-30).
 */
function expectNoStall(quietMs: number[], busyMs: number[]): void {
  expect(percentile(busyMs, 99)).toBeLessThanOrEqual(3 * Math.max(percentile(quietMs, 99), 20));
  expect(Math.max(...busyMs)).toBeLessThan(5_000);
}

/** Longer than the services' log flush interval (200 ms), with room for a loaded machine. */
const logsWritten = () => new Promise((resolve) => setTimeout(resolve, 600));

describe('1. a sign-in flood stalls no customer', () => {
  it('400 concurrent sign-ins from one address: 429 past its points, chat p99 within 3x', async () => {
    // Warm up every process's connections, then measure without the flood.
    for (let i = 0; i < 10; i += 1)
      expect((await chat(payingKey, '198.51.100.10')).status).toBe(200);
    const quiet = await chats();
    await logsWritten();
    const sessionsBefore = stack.billingPaths().filter((p) => p.endsWith('/dashboard/sessions'));
    const hashesBefore = await billingMetric('billing_dashboard_password_hashes_total');

    let floodMs = 0;
    const startedAt = performance.now();
    const flood = Promise.all(
      Array.from({ length: FLOOD }, (_, i) => signIn(`nobody${i}@example.com`, '203.0.113.66')),
    );
    void flood.then(() => (floodMs = performance.now() - startedAt));
    const busy = await chats(flood);
    const answers = await flood;

    const quietP99 = percentile(quiet.ms, 99);
    const busyP99 = percentile(busy.ms, 99);
    console.log(
      `one-address flood: ${JSON.stringify(tally(answers))} in ${floodMs.toFixed(0)} ms; chat` +
        ` p99 ${quietP99.toFixed(1)} ms quiet (${quiet.ms.length}), ${busyP99.toFixed(1)} ms` +
        ` flooded (${busy.ms.length}, slowest ${Math.max(...busy.ms).toFixed(1)} ms)`,
    );
    expect(new Set([...quiet.statuses, ...busy.statuses])).toEqual(new Set([200]));
    expectNoStall(quiet.ms, busy.ms);

    // The address's points were taken before billing was asked: no more than that reached it.
    const byStatus = tally(answers);
    expect(byStatus[429]).toBeGreaterThanOrEqual(FLOOD - AUTH_FAILURES_PER_MINUTE);
    await logsWritten();
    const sessions = stack.billingPaths().filter((p) => p.endsWith('/dashboard/sessions'));
    expect(sessions.length - sessionsBefore.length).toBeLessThanOrEqual(AUTH_FAILURES_PER_MINUTE);
    const hashes = (await billingMetric('billing_dashboard_password_hashes_total')) - hashesBefore;
    expect(hashes).toBeLessThanOrEqual(AUTH_FAILURES_PER_MINUTE);
    for (const answer of answers) {
      const error = errorOf(answer);
      expect([401, 429, 503]).toContain(answer.status);
      if (answer.status === 401) expect(error.code).toBe('invalid_credentials');
      if (answer.status === 429) expect(error.code).toBe('rate_limit_exceeded');
      if (answer.status === 503) expect(error.code).toBe('service_unavailable');
      if (answer.status !== 401) expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
  }, 180_000);

  it('400 concurrent sign-ins from 400 addresses: billing refuses what it cannot hash, chats go on', async () => {
    const refusalsBefore = await billingMetric('billing_dashboard_password_refusals_total');
    const hashesBefore = await billingMetric('billing_dashboard_password_hashes_total');
    const quiet = await chats();
    let floodMs = 0;
    const startedAt = performance.now();
    const flood = Promise.all(
      Array.from({ length: FLOOD }, (_, i) =>
        signIn(`someone${i}@example.com`, `10.22.${Math.floor(i / 250)}.${(i % 250) + 1}`),
      ),
    );
    void flood.then(() => (floodMs = performance.now() - startedAt));
    const busy = await chats(flood);
    const answers = await flood;
    const quietP99 = percentile(quiet.ms, 99);
    const busyP99 = percentile(busy.ms, 99);
    const refusals =
      (await billingMetric('billing_dashboard_password_refusals_total')) - refusalsBefore;
    const hashes = (await billingMetric('billing_dashboard_password_hashes_total')) - hashesBefore;
    console.log(
      `400-address flood: ${JSON.stringify(tally(answers))} in ${floodMs.toFixed(0)} ms;` +
        ` billing hashed ${hashes}, refused ${refusals}; chat p99 ${quietP99.toFixed(1)} ms` +
        ` quiet (${quiet.ms.length}), ${busyP99.toFixed(1)} ms flooded (${busy.ms.length},` +
        ` slowest ${Math.max(...busy.ms).toFixed(1)} ms)`,
    );
    expect(new Set([...quiet.statuses, ...busy.statuses])).toEqual(new Set([200]));
    expectNoStall(quiet.ms, busy.ms);
    // Every sign-in was answered: checked (401), or refused at once (503) by edge (more than 16
    // at billing) or by billing's bulkhead (more than one hashing and four waiting).
    expect(answers.every((a) => a.status === 401 || a.status === 503)).toBe(true);
    expect(refusals).toBeGreaterThan(0);
    expect(hashes).toBe(answers.filter((a) => a.status === 401).length);
    for (const answer of answers.filter((a) => a.status === 503)) {
      expect(errorOf(answer).code).toBe('service_unavailable');
      expect(answer.headers['retry-after']).toBe('1');
    }
  }, 180_000);
});

describe('2. the failed-authentication limit behind a proxy', () => {
  const guess = (i: number) => `sk_live_${String(i).padStart(43, 'g')}`;

  it('stops a guesser without asking billing and refuses no valid key for it', async () => {
    const guesser = '203.0.113.7';
    // The paying client shares the guesser's address (a NAT) and used its key a moment ago.
    expect((await chat(payingKey, guesser)).status).toBe(200);
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i += 1) {
      const answer = await stack.send({
        path: '/v1/user/balance',
        headers: { ...bearer(guess(i)), ...from(guesser) },
      });
      expect([answer.status, errorOf(answer).code]).toEqual([401, 'invalid_api_key']);
    }
    await logsWritten();
    const billingCallsBefore = stack.billingPaths().length;
    const past: RawAnswer[] = [];
    for (let i = 0; i < 20; i += 1) {
      past.push(
        await stack.send({
          path: i % 2 ? '/v1/user/balance' : '/v1/models',
          headers: { ...bearer(guess(100 + i)), ...from(guesser) },
        }),
      );
      past.push(await chat(guess(200 + i), guesser));
    }
    await logsWritten();
    // 429 each, and billing was asked about none of them.
    for (const answer of past) {
      expect([answer.status, errorOf(answer).code]).toEqual([429, 'rate_limit_exceeded']);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
    const asked = stack
      .billingPaths()
      .slice(billingCallsBefore)
      .filter((p) => p.endsWith('/authenticate') || p.endsWith('/admissions'));
    expect(asked).toEqual([]);

    // The paying client's key, from the tripped address: served, balance and chat.
    const balance = await stack.send({
      path: '/v1/user/balance',
      headers: { ...bearer(payingKey), ...from(guesser) },
    });
    expect(balance.status).toBe(200);
    expect((await chat(payingKey, guesser)).status).toBe(200);
    // Another customer behind the same proxy (so the same peer address), key never seen: served.
    const other = await fundAccount(stack.operator, {
      name: 'another customer',
      keyName: 'main',
      creditDzd: 10,
      credit: { reference: 'limits suite', idempotencyKey: 'limits-credit-2' },
    });
    const theirs = await stack.send({
      path: '/v1/user/balance',
      headers: { ...bearer(other.apiKey), ...from('198.51.100.77') },
    });
    expect(theirs.status).toBe(200);
    expect((await chat(other.apiKey, '198.51.100.77')).status).toBe(200);
  }, 60_000);
});

describe('after all of it', () => {
  it('leaves no hold pending and the ledger consistent', async () => {
    expect(await settledHolds(stack)).toBe(0);
    expect(await stack.ledgerCheck()).toEqual({ ok: true, violations: [] });
  });
});
