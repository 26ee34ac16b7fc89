import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import { startReceiver, type ReceivedRequest, type Receiver } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import {
  TEST_INTERNAL_TOKEN,
  completedEvent,
  internalApiApp,
  startHarness,
  type Harness,
} from '../testing/harness.suite.js';

/*
 * Signing secrets do not pile up. 25 rotations leave two active secrets
 * (the current one and the previous one) and a delivery carries two signatures; the rotation
 * limit answers 429 with Retry-After; "expire the previous secret now" leaves one signature,
 * the current secret's. Real PostgreSQL, the internal API, an HTTPS receiver on 127.0.0.1.
 */

const stripe = new Stripe('sk_test_unused');
const ROTATIONS = 25;

interface WireSecret {
  id: string;
  secret: string;
  created_at: string;
  expires_at: string | null;
}

let certs: TestCertificates;
let receiver: Receiver;
let harness: Harness;
let api: ReturnType<typeof request>;

const get = (path: string) =>
  api.get(`/internal/v1${path}`).set(INTERNAL_TOKEN_HEADER, TEST_INTERNAL_TOKEN);
const post = (path: string) =>
  api.post(`/internal/v1${path}`).set(INTERNAL_TOKEN_HEADER, TEST_INTERNAL_TOKEN);

beforeAll(async () => {
  certs = createTestCertificates();
  receiver = await startReceiver(certs);
  // The limit raised to the number of rotations this file makes on one account.
  harness = await startHarness({
    extraCaPem: certs.caPem,
    env: { SECRET_ROTATIONS_PER_HOUR: String(ROTATIONS), RETRY_SCHEDULE_B_MS: '0' },
  });
  api = request(internalApiApp(harness));
});

afterAll(async () => {
  await harness?.close();
  await receiver?.close();
  certs?.remove();
});

/** Sends one completion of `accountId` to `path` and returns what the receiver got. */
async function deliver(accountId: string, path: string, format: 'A' | 'B' = 'A') {
  await harness.dispatcher.intake.accept(
    completedEvent(receiver.url(path), { accountId, webhookFormat: format }),
  );
  await harness.dispatcher.loop.tick();
  await harness.dispatcher.loop.idle();
  const [received] = receiver.requestsTo(path);
  expect(received).toBeDefined();
  return received!;
}

const variantAVerifies = (delivery: ReceivedRequest, secret: string): boolean => {
  try {
    return stripe.webhooks.signature!.verifyHeader(
      delivery.body.toString('utf8'),
      String(delivery.headers['x-service-signature']),
      secret,
      300,
    );
  } catch {
    return false;
  }
};

const standardVerifies = (delivery: ReceivedRequest, secret: string): boolean => {
  try {
    new Webhook(secret).verify(
      delivery.body.toString('utf8'),
      delivery.headers as Record<string, string>,
    );
    return true;
  } catch {
    return false;
  }
};

const v1Count = (delivery: ReceivedRequest) =>
  String(delivery.headers['x-service-signature']).match(/v1=/g)?.length ?? 0;
const standardCount = (delivery: ReceivedRequest) =>
  String(delivery.headers['webhook-signature']).split(' ').length;

async function activeSecrets(accountId: string): Promise<WireSecret[]> {
  const listed = await get(`/accounts/${accountId}/webhook-secrets`);
  expect(listed.status).toBe(200);
  return listed.body.secrets as WireSecret[];
}

async function storedRows(accountId: string): Promise<number> {
  const result = await harness.pool.query(
    'SELECT count(*)::int AS n FROM webhook_secrets WHERE account_id = $1',
    [accountId],
  );
  return (result.rows[0] as { n: number }).n;
}

describe('at most two active signing secrets', () => {
  const accountId = 'usr_pileup';
  const rotated: WireSecret[] = [];
  let first: WireSecret;

  beforeAll(async () => {
    [first] = (await activeSecrets(accountId)) as [WireSecret];
    for (let i = 0; i < ROTATIONS; i++) {
      const answer = await post(`/accounts/${accountId}/webhook-secrets/rotate`);
      expect(answer.status).toBe(201);
      rotated.push(answer.body as WireSecret);
    }
  });

  it('25 rotations leave the current secret and the previous one, nothing else stored', async () => {
    const active = await activeSecrets(accountId);
    const [previous, current] = [rotated.at(-2)!, rotated.at(-1)!];
    expect(active.map((s) => s.id)).toEqual([previous.id, current.id]);
    expect(active[1]).toEqual(current);
    expect(active[0]!.expires_at).not.toBeNull();
    // The previous one signs for a full window from the last rotation.
    const windowMs = Date.parse(active[0]!.expires_at!) - Date.parse(current.created_at);
    expect(Math.abs(windowMs - harness.config.SECRET_ROTATION_WINDOW_MS)).toBeLessThan(5_000);
    expect(await storedRows(accountId)).toBe(2);
  });

  it('a delivery then carries two signatures, which verify with exactly those two secrets', async () => {
    const delivery = await deliver(accountId, '/pileup-a');
    expect(v1Count(delivery)).toBe(2);
    expect(standardCount(delivery)).toBe(2);
    const [previous, current] = [rotated.at(-2)!.secret, rotated.at(-1)!.secret];
    for (const secret of [previous, current]) {
      expect(variantAVerifies(delivery, secret)).toBe(true);
      expect(standardVerifies(delivery, secret)).toBe(true);
    }
    for (const gone of [first.secret, ...rotated.slice(0, -2).map((s) => s.secret)]) {
      expect(variantAVerifies(delivery, gone)).toBe(false);
      expect(standardVerifies(delivery, gone)).toBe(false);
    }
    const headerBytes = Object.entries(delivery.headers)
      .map(([name, value]) => name.length + String(value).length)
      .reduce((a, b) => a + b, 0);
    expect(headerBytes).toBeLessThan(1_024);
  });

  it('Variant B signs with the previous secret while it lasts', async () => {
    const delivery = await deliver(accountId, '/pileup-b', 'B');
    const expected = createHmac('sha256', rotated.at(-2)!.secret)
      .update(delivery.body)
      .digest('hex');
    expect(delivery.headers['x-service-signature']).toBe(expected);
    expect(standardCount(delivery)).toBe(2);
  });

  it('the next rotation past the hourly limit is 429 rate_limit_exceeded with Retry-After', async () => {
    const refused = await post(`/accounts/${accountId}/webhook-secrets/rotate`);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        message: expect.stringContaining('rotations per hour'),
        type: 'service_error',
        code: 'rate_limit_exceeded',
      },
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(3_000);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    // Nothing changed: the same two secrets still sign.
    expect((await activeSecrets(accountId)).map((s) => s.id)).toEqual(
      rotated.slice(-2).map((s) => s.id),
    );
    // Per account: another account rotates freely.
    const other = await post('/accounts/usr_pileup_other/webhook-secrets/rotate');
    expect(other.status).toBe(201);
  });

  it('allows a rotation again once the oldest rotation of the hour leaves the window', async () => {
    await harness.pool.query(
      `DELETE FROM webhook_secret_rotations
        WHERE ctid = (SELECT ctid FROM webhook_secret_rotations
                       WHERE account_id = $1 ORDER BY rotated_at LIMIT 1)`,
      [accountId],
    );
    const again = await post(`/accounts/${accountId}/webhook-secrets/rotate`);
    expect(again.status).toBe(201);
    rotated.push(again.body as WireSecret);
    expect((await activeSecrets(accountId)).map((s) => s.id)).toEqual(
      rotated.slice(-2).map((s) => s.id),
    );
  });
});

describe('expire the previous secret now', () => {
  it('leaves one signature on the next delivery, the current secret’s', async () => {
    const accountId = 'usr_expire_now';
    const [previous] = (await activeSecrets(accountId)) as [WireSecret];
    const current = (await post(`/accounts/${accountId}/webhook-secrets/rotate`))
      .body as WireSecret;
    expect(await activeSecrets(accountId)).toHaveLength(2);

    const expired = await post(`/accounts/${accountId}/webhook-secrets/expire-previous`);
    expect(expired.status).toBe(200);
    expect(expired.body).toEqual({ expired: 1, secrets: [current] });
    expect(await activeSecrets(accountId)).toEqual([current]);
    expect(await storedRows(accountId)).toBe(1);

    const delivery = await deliver(accountId, '/expired-a');
    expect(v1Count(delivery)).toBe(1);
    expect(standardCount(delivery)).toBe(1);
    expect(variantAVerifies(delivery, current.secret)).toBe(true);
    expect(standardVerifies(delivery, current.secret)).toBe(true);
    expect(variantAVerifies(delivery, previous.secret)).toBe(false);
    expect(standardVerifies(delivery, previous.secret)).toBe(false);

    const deliveryB = await deliver(accountId, '/expired-b', 'B');
    expect(deliveryB.headers['x-service-signature']).toBe(
      createHmac('sha256', current.secret).update(deliveryB.body).digest('hex'),
    );

    // Idempotent: nothing left to expire.
    const again = await post(`/accounts/${accountId}/webhook-secrets/expire-previous`);
    expect(again.body).toEqual({ expired: 0, secrets: [current] });
  });
});
