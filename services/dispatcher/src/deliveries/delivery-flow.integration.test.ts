import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { makeEnvelope, type InferenceCompletedPayload } from '@gateway/contracts';
import {
  createGatewayBus,
  deadQueueName,
  gatewayNames,
  silentLogger,
  type Consumer,
  type MessageBus,
} from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { testAmqpUrl, uniquePrefix } from '@gateway/testing';
import { startReceiver, type Receiver, type ReceivedRequest } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import {
  completedEvent,
  settled,
  startHarness,
  waitFor,
  type Harness,
} from '../testing/harness.suite.js';
import { completionHandler } from './intake.js';

const stripe = new Stripe('sk_test_unused');

describe('completion event → signed webhook (RabbitMQ, PostgreSQL, HTTPS receiver)', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  let harness: Harness;
  let bus: MessageBus;
  let consumer: Consumer;
  const prefix = uniquePrefix('dispatch-flow');
  const names = gatewayNames(prefix);

  const publish = (payload: InferenceCompletedPayload | object) =>
    bus.publish(
      { exchange: names.exchanges.events, routingKey: names.routingKeys.inferenceCompleted },
      'jobId' in payload
        ? makeEnvelope('inference.completed', payload as InferenceCompletedPayload)
        : payload,
    );
  const firstRequestTo = (path: string) =>
    waitFor(() => receiver.requestsTo(path)[0], 10_000, `a request to ${path}`);

  beforeAll(async () => {
    certs = createTestCertificates();
    receiver = await startReceiver(certs);
    harness = await startHarness({
      extraCaPem: certs.caPem,
      env: { RETRY_SCHEDULE_B_MS: '0,50,100' },
    });
    bus = createGatewayBus({ AMQP_URL: testAmqpUrl(), AMQP_PREFIX: prefix }, silentLogger);
    await bus.start();
    const logger = createLogger({ service: 'dispatcher', level: 'silent' });
    consumer = await bus.consume(
      names.queues.webhookCompletions,
      completionHandler(harness.dispatcher.intake, logger),
      { prefetch: 4 },
    );
    harness.dispatcher.loop.start();
  });

  afterAll(async () => {
    await consumer?.cancel();
    await bus?.close();
    await harness?.close();
    await receiver?.close();
    certs?.remove();
  });

  const verifyBoth = (request: ReceivedRequest, body: Buffer, secret: string) => {
    const header = String(request.headers['x-service-signature']);
    let stripeOk = true;
    try {
      stripe.webhooks.signature!.verifyHeader(body.toString('utf8'), header, secret, 300);
    } catch {
      stripeOk = false;
    }
    let standardOk = true;
    try {
      new Webhook(secret).verify(body.toString('utf8'), request.headers as Record<string, string>);
    } catch {
      standardOk = false;
    }
    return { stripeOk, standardOk };
  };

  it('delivers a Variant A POST whose signatures verify with stripe and standardwebhooks', async () => {
    const event = completedEvent(receiver.url('/a'), { accountId: 'usr_flow_a' });
    await publish(event);
    const request = await firstRequestTo('/a');
    const delivery = await settled(harness.pool, event.jobId);
    expect(delivery.status).toBe('delivered');
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Service-Webhook/1.0',
      'x-service-delivery-id': delivery.id,
      'webhook-id': delivery.id,
    });
    expect(delivery.id).toMatch(/^whd_[0-9a-f-]{36}$/);
    expect(JSON.parse(request.body.toString('utf8'))).toEqual({
      id: delivery.id,
      status: 'succeeded',
      usage: { prompt_tokens: 12, completion_tokens: 34 },
      cost_dzd: 0.0042,
      settlement: 'settled',
      results: [{ generated_text: 'a secret answer' }],
    });

    const [secret] = await harness.dispatcher.secrets.active('usr_flow_a');
    expect(verifyBoth(request, request.body, secret!.secret)).toEqual({
      stripeOk: true,
      standardOk: true,
    });
    const tampered = Buffer.from(request.body);
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 0x01;
    expect(verifyBoth(request, tampered, secret!.secret)).toEqual({
      stripeOk: false,
      standardOk: false,
    });
  });

  it('stores the result encrypted: no plaintext in the database', async () => {
    const event = completedEvent(receiver.url('/sealed'));
    await publish(event);
    const delivery = await settled(harness.pool, event.jobId);
    const stored = delivery.payload_ciphertext!;
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.includes(Buffer.from('a secret answer'))).toBe(false);
    expect(stored.includes(Buffer.from('receiver.test'))).toBe(false);
  });

  it('a redelivered completion event creates no second delivery', async () => {
    const event = completedEvent(receiver.url('/twice'));
    await publish(event);
    await publish(event);
    await settled(harness.pool, event.jobId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const rows = await harness.pool.query('SELECT id FROM webhook_deliveries WHERE job_id = $1', [
      event.jobId,
    ]);
    expect(rows.rowCount).toBe(1);
    expect(receiver.requestsTo('/twice')).toHaveLength(1);
  });

  it('dead-letters an event that is not a valid completion', async () => {
    const dead: unknown[] = [];
    const deadConsumer = await bus.consume(
      deadQueueName(names.queues.webhookCompletions),
      async (message) => {
        dead.push(message.body);
        return 'ack';
      },
      { prefetch: 1 },
    );
    await publish({ v: 1, kind: 'inference.completed', id: 'x', createdAtMs: 1, payload: {} });
    await waitFor(() => (dead.length > 0 ? dead : undefined), 10_000, 'a dead-lettered event');
    await deadConsumer.cancel();
  });

  it('after a rotation, the next delivery verifies with each of the two secrets', async () => {
    const accountId = 'usr_flow_rotation';
    const [previous] = await harness.dispatcher.secrets.active(accountId);
    const current = await harness.dispatcher.secrets.rotate(accountId);
    const event = completedEvent(receiver.url('/rotated'), { accountId });
    await publish(event);
    const request = await firstRequestTo('/rotated');
    expect(String(request.headers['x-service-signature']).match(/v1=/g)).toHaveLength(2);
    for (const secret of [previous!.secret, current.secret]) {
      expect(verifyBoth(request, request.body, secret)).toEqual({
        stripeOk: true,
        standardOk: true,
      });
    }
  });

  it('signs with the secrets its claim read, without reading them again', async () => {
    const accountId = 'usr_flow_claimed';
    const [secret] = await harness.dispatcher.secrets.active(accountId);
    const reads = jest.spyOn(harness.dispatcher.secrets, 'active');
    try {
      await publish(completedEvent(receiver.url('/claimed'), { accountId }));
      const request = await firstRequestTo('/claimed');
      expect(verifyBoth(request, request.body, secret!.secret)).toEqual({
        stripeOk: true,
        standardOk: true,
      });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('a failed job reaches a Variant B account as the Variant B failure body', async () => {
    const accountId = 'usr_flow_b';
    const event = completedEvent(receiver.url('/b'), {
      accountId,
      webhookFormat: 'B',
      status: 'failed',
      usage: { promptTokens: 3, completionTokens: 0 },
      costMicroDzd: null,
      results: undefined,
      error: { type: 'inference_failed', message: 'Inference failed.' },
    });
    await publish(event);
    const request = await firstRequestTo('/b');
    expect(JSON.parse(request.body.toString('utf8'))).toEqual({
      request_id: event.jobId,
      inference_status: { status: 'failed', runtime_ms: 0, cost: 0 },
    });
    const [secret] = await harness.dispatcher.secrets.active(accountId);
    const expected = createHmac('sha256', secret!.secret).update(request.body).digest('hex');
    expect(request.headers['x-service-signature']).toBe(expected);
  });
});
