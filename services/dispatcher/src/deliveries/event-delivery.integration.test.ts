import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import {
  makeEnvelope,
  type AccountAlertPayload,
  type ResponseEndedPayload,
} from '@gateway/contracts';
import {
  createGatewayBus,
  gatewayNames,
  silentLogger,
  type Consumer,
  type MessageBus,
} from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { testAmqpUrl, uniquePrefix } from '@gateway/testing';
import { startReceiver, type Receiver } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import { settled, startHarness, waitFor, type Harness } from '../testing/harness.suite.js';
import { completionHandler } from './intake.js';

/*
 * Account alerts and ended background responses on the dispatcher's
 * machinery: an `account.alert` or `response.ended` event from billing's outbox becomes one
 * signed delivery per event id (however often it arrives), its body in the Standard Webhooks
 * shape, `webhook-id` the event's id, listed with its type.
 */

const stripe = new Stripe('sk_test_unused');

describe('account alert or ended response → signed webhook', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  let harness: Harness;
  let bus: MessageBus;
  let consumer: Consumer;
  const prefix = uniquePrefix('dispatch-alerts');
  const names = gatewayNames(prefix);

  const alert = (url: string): AccountAlertPayload => {
    const eventId = `alr_${randomUUID().replaceAll('-', '')}`;
    return {
      eventId,
      accountId: 'usr_alerts',
      type: 'balance.low',
      occurredAtMs: Date.parse('2030-01-01T10:00:00Z'),
      webhookUrl: url,
      data: {
        event_id: eventId,
        account_id: 'usr_alerts',
        balance_dzd: 0.34,
        balance_micro_dzd: '340000',
        threshold_dzd: 0.5,
        threshold_micro_dzd: '500000',
      },
    };
  };
  const publish = (payload: AccountAlertPayload) =>
    bus.publish(
      { exchange: names.exchanges.events, routingKey: names.routingKeys.accountAlert },
      makeEnvelope('account.alert', payload),
    );

  beforeAll(async () => {
    certs = createTestCertificates();
    receiver = await startReceiver(certs);
    harness = await startHarness({ extraCaPem: certs.caPem });
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

  it('sends one signed delivery per alert id, in the Standard Webhooks shape', async () => {
    const event = alert(receiver.url('/alert'));
    await publish(event);
    await publish(event);
    const delivery = await settled(harness.pool, event.eventId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requestsTo('/alert')).toHaveLength(1);
    const request = receiver.requestsTo('/alert')[0]!;
    expect(request.headers).toMatchObject({
      'x-service-delivery-id': delivery.id,
      'webhook-id': event.eventId,
    });
    expect(JSON.parse(request.body.toString('utf8'))).toEqual({
      type: 'balance.low',
      timestamp: '2030-01-01T10:00:00.000Z',
      data: event.data,
    });
    const [secret] = await harness.dispatcher.secrets.active('usr_alerts');
    const body = request.body.toString('utf8');
    expect(() =>
      new Webhook(secret!.secret).verify(body, request.headers as Record<string, string>),
    ).not.toThrow();
    expect(() =>
      stripe.webhooks.signature!.verifyHeader(
        body,
        String(request.headers['x-service-signature']),
        secret!.secret,
        300,
      ),
    ).not.toThrow();
  });

  it('sends one signed delivery per ended response, naming it and nothing of its content', async () => {
    const responseId = `resp_${randomUUID().replaceAll('-', '')}`;
    const event: ResponseEndedPayload = {
      eventId: responseId,
      accountId: 'usr_alerts',
      occurredAtMs: Date.parse('2030-01-01T11:00:00Z'),
      webhookUrl: receiver.url('/response'),
      type: 'response.completed',
      data: { id: responseId },
    };
    const route = { exchange: names.exchanges.events, routingKey: names.routingKeys.responseEnded };
    await bus.publish(route, makeEnvelope('response.ended', event));
    await bus.publish(route, makeEnvelope('response.ended', event));
    await settled(harness.pool, responseId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const requests = receiver.requestsTo('/response');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers['webhook-id']).toBe(responseId);
    const body = requests[0]!.body.toString('utf8');
    expect(JSON.parse(body)).toEqual({
      type: 'response.completed',
      timestamp: '2030-01-01T11:00:00.000Z',
      data: { id: responseId },
    });
    const [secret] = await harness.dispatcher.secrets.active('usr_alerts');
    expect(() =>
      new Webhook(secret!.secret).verify(body, requests[0]!.headers as Record<string, string>),
    ).not.toThrow();
  });

  it('lists the delivery with its event type and the alert id as its job id, redeliverable', async () => {
    const event = alert(receiver.url('/listed'));
    await publish(event);
    await settled(harness.pool, event.eventId);
    const listed = await waitFor(async () => {
      const page = await harness.dispatcher.deliveries.listForAccount('usr_alerts', 100, null);
      return page?.find((d) => d.jobId === event.eventId);
    });
    expect(listed).toMatchObject({ eventType: 'balance.low', status: 'delivered' });
    const again = await harness.dispatcher.deliveries.redeliver(listed.id);
    expect(again.outcome).toBe('queued');
    await waitFor(() => (receiver.requestsTo('/listed').length === 2 ? true : undefined));
    const [first, second] = receiver.requestsTo('/listed');
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
  });
});
