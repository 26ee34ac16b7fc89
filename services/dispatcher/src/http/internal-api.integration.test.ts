import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startReceiver, type Receiver } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import {
  TEST_INTERNAL_TOKEN,
  completedEvent,
  internalApiApp,
  startHarness,
  type Harness,
} from '../testing/harness.suite.js';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';

const DAY_MS = 86_400_000;

function apiFor(harness: Harness) {
  const app = internalApiApp(harness);
  const api = request(app);
  return {
    api,
    get: (path: string) =>
      api.get(`/internal/v1${path}`).set(INTERNAL_TOKEN_HEADER, TEST_INTERNAL_TOKEN),
    post: (path: string) =>
      api.post(`/internal/v1${path}`).set(INTERNAL_TOKEN_HEADER, TEST_INTERNAL_TOKEN),
  };
}

/** Runs the dispatch once and waits for its attempts (the loop is not started here). */
async function dispatchOnce(harness: Harness): Promise<void> {
  await harness.dispatcher.loop.tick();
  await harness.dispatcher.loop.idle();
}

describe('dispatcher internal API', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  let harness: Harness;
  let client: ReturnType<typeof apiFor>;

  beforeAll(async () => {
    certs = createTestCertificates();
    receiver = await startReceiver(certs);
    receiver.setResponder('/down', () => ({ status: 503 }));
    harness = await startHarness({
      extraCaPem: certs.caPem,
      env: { RETRY_SCHEDULE_A_MS: '0,60000' },
    });
    client = apiFor(harness);
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
    certs?.remove();
  });

  it('refuses calls without the internal credential', async () => {
    const missing = await client.api.get('/internal/v1/accounts/usr_1/webhook-secrets');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({
      error: {
        message: 'A valid internal service credential is required',
        type: 'service_error',
        code: 'unauthorized',
      },
    });
    const wrong = await client.api
      .get('/internal/v1/accounts/usr_1/webhook-secrets')
      .set(INTERNAL_TOKEN_HEADER, 'x'.repeat(64));
    expect(wrong.status).toBe(401);
  });

  it('makes a signing secret on first need and keeps it', async () => {
    const first = await client.get('/accounts/usr_secrets/webhook-secrets');
    expect(first.status).toBe(200);
    expect(first.body.secrets).toEqual([
      {
        id: expect.stringMatching(/^whs_/),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        created_at: expect.any(String),
        expires_at: null,
      },
    ]);
    const again = await client.get('/accounts/usr_secrets/webhook-secrets');
    expect(again.body).toEqual(first.body);
  });

  it('rotates: the previous secret stays active for the rotation window', async () => {
    const before = await client.get('/accounts/usr_rotate/webhook-secrets');
    const rotated = await client.post('/accounts/usr_rotate/webhook-secrets/rotate');
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({
      secret: expect.stringMatching(/^whsec_/),
      expires_at: null,
    });
    const after = await client.get('/accounts/usr_rotate/webhook-secrets');
    const [previous, current] = after.body.secrets;
    expect(previous.secret).toBe(before.body.secrets[0].secret);
    expect(current).toEqual(rotated.body);
    const windowMs = Date.parse(previous.expires_at) - Date.parse(rotated.body.created_at);
    expect(Math.abs(windowMs - DAY_MS)).toBeLessThan(5_000);
  });

  it('lists deliveries newest first, with attempts, in pages', async () => {
    const accountId = 'usr_list';
    const events = [
      completedEvent(receiver.url('/ok'), { accountId }),
      completedEvent(receiver.url('/down'), { accountId }),
      completedEvent(receiver.url('/ok'), { accountId }),
    ];
    for (const event of events) await harness.dispatcher.intake.accept(event);
    await dispatchOnce(harness);

    const page1 = await client.get(`/accounts/${accountId}/webhook-deliveries?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.deliveries.map((d: { job_id: string }) => d.job_id)).toEqual([
      events[2]!.jobId,
      events[1]!.jobId,
    ]);
    const retrying = page1.body.deliveries[1];
    expect(retrying).toMatchObject({
      id: expect.stringMatching(/^whd_/),
      status: 'retrying',
      format: 'A',
      payload_purged: false,
      next_attempt_at: expect.any(String),
      attempts: [
        {
          attempt: 1,
          at: expect.any(String),
          status_code: 503,
          latency_ms: expect.any(Number),
          outcome: 'retry',
          error: 'HTTP 503',
        },
      ],
    });
    expect(page1.body.deliveries[0]).toMatchObject({ status: 'delivered', next_attempt_at: null });

    const page2 = await client.get(
      `/accounts/${accountId}/webhook-deliveries?limit=2&cursor=${page1.body.next_cursor}`,
    );
    expect(page2.body.deliveries.map((d: { job_id: string }) => d.job_id)).toEqual([
      events[0]!.jobId,
    ]);
    expect(page2.body.next_cursor).toBeNull();
  });

  it('rejects a bad limit or cursor with the gateway error shape', async () => {
    const limit = await client.get('/accounts/usr_list/webhook-deliveries?limit=0');
    expect(limit.status).toBe(400);
    expect(limit.body.error).toMatchObject({ code: 'invalid_request_body', param: 'limit' });
    const cursor = await client.get('/accounts/usr_list/webhook-deliveries?cursor=bm9wZQ');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error).toMatchObject({ code: 'invalid_request_body', param: 'cursor' });
  });

  it('redelivers a finished delivery with the same id; refuses unknown and scheduled ones', async () => {
    const event = completedEvent(receiver.url('/again'), { accountId: 'usr_redeliver' });
    const { deliveryId } = await harness.dispatcher.intake.accept(event);
    await dispatchOnce(harness);

    const queued = await client.post(`/webhook-deliveries/${deliveryId}/redeliver`);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ id: deliveryId, status: 'queued' });
    const busy = await client.post(`/webhook-deliveries/${deliveryId}/redeliver`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('conflict');

    await dispatchOnce(harness);
    const requests = receiver.requestsTo('/again');
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.headers['x-service-delivery-id'])).toEqual([
      deliveryId,
      deliveryId,
    ]);
    const list = await client.get('/accounts/usr_redeliver/webhook-deliveries');
    expect(list.body.deliveries[0].attempts.map((a: { attempt: number }) => a.attempt)).toEqual([
      1, 2,
    ]);

    const unknown = await client.post('/webhook-deliveries/whd_nope/redeliver');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('resource_not_found');
  });

  it("redelivers through the account's route only the account's own delivery", async () => {
    const event = completedEvent(receiver.url('/own'), { accountId: 'usr_owner' });
    const { deliveryId } = await harness.dispatcher.intake.accept(event);
    await dispatchOnce(harness);

    const foreign = await client.post(
      `/accounts/usr_other/webhook-deliveries/${deliveryId}/redeliver`,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('resource_not_found');
    const own = await client.post(`/accounts/usr_owner/webhook-deliveries/${deliveryId}/redeliver`);
    expect(own.status).toBe(202);
    expect(own.body).toMatchObject({ id: deliveryId, status: 'queued' });
  });
});
