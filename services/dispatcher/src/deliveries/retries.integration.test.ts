import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startReceiver, type Receiver } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import {
  completedEvent,
  settled,
  startHarness,
  type DeliveryRowForTest,
  type Harness,
} from '../testing/harness.suite.js';

/**
 * The default schedule shrunk 1500×: one minute becomes 40 ms (30 min → 1.2 s), so the nine
 * attempts take ~5 s. The attempt timeout stays at its real 5 s for the slow receiver.
 */
const SCHEDULE_MS = [0, 40, 80, 160, 320, 640, 1200, 1200, 1200];
const JITTER_RATIO = 0.1;
/** Randomness pinned near the top, so every delay must carry its jitter (+9.9%). */
const RANDOM = 0.99;
/**
 * What an observed offset may exceed its jittered delay by: the attempt's own latency, the
 * tick (10 ms), database round trips and a fresh TLS handshake — usually under 100 ms, but
 * Jest runs the process tests beside this file on two cores, and CPU starvation was seen to
 * add 600 ms. The lower bound is exact; this one only shows no attempt waits for anything else.
 */
const SLACK_MS = 1_000;

interface AttemptRow {
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  outcome: string;
  error: string | null;
}

describe('retry schedule against a real receiver', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  let harness: Harness;
  const jobs: Record<string, string> = {};

  const attemptsOf = async (delivery: DeliveryRowForTest) =>
    (
      await harness.pool.query<AttemptRow>(
        `SELECT attempt, status_code, latency_ms, outcome, error FROM webhook_attempts
          WHERE delivery_id = $1 ORDER BY attempt`,
        [delivery.id],
      )
    ).rows;

  beforeAll(async () => {
    certs = createTestCertificates();
    receiver = await startReceiver(certs);
    receiver.setResponder('/broken', () => ({ status: 500 }));
    receiver.setResponder('/gone', () => ({ status: 404 }));
    receiver.setResponder('/moved', () => ({
      status: 302,
      headers: { Location: receiver.url('/elsewhere') },
    }));
    receiver.setResponder('/slow', (_request, index) =>
      index === 0 ? { status: 204, delayMs: 10_000 } : { status: 204 },
    );
    receiver.setResponder('/busy', (_request, index) =>
      index === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 204 },
    );
    harness = await startHarness({
      extraCaPem: certs.caPem,
      env: {
        RETRY_SCHEDULE_A_MS: SCHEDULE_MS.join(','),
        RETRY_JITTER_RATIO: String(JITTER_RATIO),
      },
      random: () => RANDOM,
    });
    // All deliveries run side by side, so the file takes as long as the slowest one.
    for (const path of ['/broken', '/gone', '/moved', '/slow', '/busy']) {
      const event = completedEvent(receiver.url(path));
      jobs[path] = event.jobId;
      await harness.dispatcher.intake.accept(event);
    }
    harness.dispatcher.loop.start();
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
    certs?.remove();
  });

  it('an endpoint answering 500 gets exactly 9 attempts at the scheduled offsets', async () => {
    const delivery = await settled(harness.pool, jobs['/broken']!);
    expect(delivery.status).toBe('dropped');
    const requests = receiver.requestsTo('/broken');
    expect(requests).toHaveLength(9);
    for (let i = 1; i < requests.length; i += 1) {
      const gapMs = requests[i]!.atMs - requests[i - 1]!.atMs;
      const jitteredMs = Math.round(SCHEDULE_MS[i]! * (1 + JITTER_RATIO * RANDOM));
      expect(gapMs).toBeGreaterThanOrEqual(jitteredMs - 2); // clocks: ms rounding on both sides
      expect(gapMs).toBeLessThanOrEqual(jitteredMs + SLACK_MS);
    }
    const attempts = await attemptsOf(delivery);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(attempts.map((a) => a.outcome)).toEqual([...Array(8).fill('retry'), 'dropped']);
    expect(attempts.every((a) => a.status_code === 500 && a.error === 'HTTP 500')).toBe(true);
  });

  it('the delivery id is the same on every attempt; the signature time is fresh each time', async () => {
    const delivery = await settled(harness.pool, jobs['/broken']!);
    const requests = receiver.requestsTo('/broken');
    const ids = new Set(requests.map((r) => r.headers['x-service-delivery-id']));
    expect([...ids]).toEqual([delivery.id]);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(ids);
    const times = requests.map((r) =>
      Number(/^t=(\d+),/.exec(String(r.headers['x-service-signature']))![1]),
    );
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(3);
  });

  it('404 fails after one attempt', async () => {
    const delivery = await settled(harness.pool, jobs['/gone']!);
    expect(delivery.status).toBe('failed');
    expect(receiver.requestsTo('/gone')).toHaveLength(1);
    expect(await attemptsOf(delivery)).toEqual([
      expect.objectContaining({
        attempt: 1,
        status_code: 404,
        outcome: 'failed',
        error: 'HTTP 404',
      }),
    ]);
  });

  it('302 fails after one attempt and the redirect is not followed', async () => {
    const delivery = await settled(harness.pool, jobs['/moved']!);
    expect(delivery.status).toBe('failed');
    expect(receiver.requestsTo('/moved')).toHaveLength(1);
    expect(receiver.requestsTo('/elsewhere')).toHaveLength(0);
    expect(await attemptsOf(delivery)).toEqual([
      expect.objectContaining({ status_code: 302, error: 'redirect not followed (HTTP 302)' }),
    ]);
  });

  it('a 10 s-slow endpoint is cut at 5 s and retried', async () => {
    const delivery = await settled(harness.pool, jobs['/slow']!, 20_000);
    expect(delivery.status).toBe('delivered');
    const [first, second] = await attemptsOf(delivery);
    expect(first).toMatchObject({
      status_code: null,
      outcome: 'retry',
      error: 'timeout after 5000 ms',
    });
    expect(first!.latency_ms).toBeGreaterThanOrEqual(4_990);
    expect(first!.latency_ms).toBeLessThan(6_000);
    expect(second).toMatchObject({ attempt: 2, status_code: 204, outcome: 'delivered' });
  }, 30_000);

  it('429 waits as long as Retry-After asks (up to the longest step)', async () => {
    const delivery = await settled(harness.pool, jobs['/busy']!);
    expect(delivery.status).toBe('delivered');
    const [first, second] = receiver.requestsTo('/busy');
    expect(second!.atMs - first!.atMs).toBeGreaterThanOrEqual(1_000);
  });
});
