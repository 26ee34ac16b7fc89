import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testAmqpUrl, testServiceAmqpUrl, uniquePrefix } from '@gateway/testing';
import {
  BROKER_SERVICES,
  brokerDefinitions,
  brokerPermissions,
  rabbitPasswordHash,
  serviceTopology,
  type BrokerService,
} from './broker-access.js';
import { silentLogger } from './bus.js';
import type { Delivery, MessageBus } from './bus.js';
import { waitUntil } from './bus-behaviour.suite.js';
import { createGatewayBus } from './rabbitmq-bus.js';
import {
  QUEUE_NAME_EXCHANGE,
  cancelQueueName,
  gatewayNames,
  gatewayTopology,
  replyQueueName,
} from './topology.js';
import { planTopology } from './topology-plan.js';

const matches = (pattern: string, name: string) => new RegExp(pattern).test(name);

describe('per-service topology and permissions (one source)', () => {
  const access = brokerPermissions();
  const everyName = (() => {
    const plan = planTopology(gatewayTopology(''));
    return [...plan.exchanges, ...plan.queues.map((q) => q.name)];
  })();
  const id = randomUUID();
  const reply = replyQueueName('', id);
  const cancel = cancelQueueName('', id);

  it('lets each service configure exactly what it declares', () => {
    const configurable = (service: BrokerService) =>
      [...everyName, reply, cancel].filter((name) =>
        matches(access[service].permission.configure, name),
      );
    for (const service of BROKER_SERVICES) {
      const plan = planTopology(serviceTopology(service, ''));
      const own = [...plan.exchanges, ...plan.queues.map((q) => q.name)];
      const perProcess = { edge: [reply], 'inference-worker': [cancel] } as Record<
        string,
        string[]
      >;
      expect([service, configurable(service).sort()]).toEqual([
        service,
        [...own, ...(perProcess[service] ?? [])].sort(),
      ]);
    }
  });

  it('is the table of the README (production names)', () => {
    const summary = Object.fromEntries(
      BROKER_SERVICES.map((service) => {
        const { permission, topic } = access[service];
        const names = (pattern: string) =>
          [...everyName, QUEUE_NAME_EXCHANGE, reply, cancel]
            .filter((name) => matches(pattern, name))
            .map((name) => name.replace(id, '<uuid>'));
        return [
          service,
          {
            write: names(permission.write).filter(
              (n) => n.startsWith('gateway.') || n === 'amq.topic',
            ),
            read: names(permission.read).filter(
              (n) => n.startsWith('gateway.') || n === 'amq.topic',
            ),
            sendsTo: names(topic.write),
          },
        ];
      }),
    );
    expect(summary).toEqual({
      edge: {
        write: ['gateway.jobs', 'gateway.control', 'amq.topic'],
        read: ['amq.topic'],
        sendsTo: [],
      },
      'inference-worker': {
        write: ['gateway.events', 'gateway.dlx', 'amq.topic'],
        read: ['gateway.jobs', 'gateway.control', 'gateway.dlx', 'amq.topic'],
        sendsTo: [
          'inference.jobs.retry',
          'inference.jobs.priority.retry',
          'billing.settlements',
          'edge.replies.<uuid>',
        ],
      },
      billing: {
        write: ['gateway.events', 'gateway.dlx'],
        read: ['gateway.dlx', 'amq.topic'],
        sendsTo: [],
      },
      dispatcher: {
        write: ['gateway.dlx', 'amq.topic'],
        read: ['gateway.events', 'gateway.dlx', 'amq.topic'],
        sendsTo: ['webhook.completions.retry'],
      },
    });
  });

  it('reads (consumes) only its own queues', () => {
    const queues = [...everyName.filter((n) => !n.startsWith('gateway.')), reply, cancel];
    const readable = (service: BrokerService) =>
      queues.filter((name) => matches(access[service].permission.read, name));
    expect(readable('edge')).toEqual([reply]);
    expect(readable('dispatcher')).toEqual([
      'webhook.completions',
      'webhook.completions.dead',
      'webhook.completions.retry',
    ]);
    expect(readable('billing')).toEqual([
      'billing.settlements',
      'billing.settlements.dead',
      'billing.unread-replies',
      'billing.unread-replies.dead',
    ]);
    expect(readable('inference-worker')).toEqual([
      'inference.jobs',
      'inference.jobs.dead',
      'inference.jobs.retry',
      'inference.jobs.priority',
      'inference.jobs.priority.dead',
      'inference.jobs.priority.retry',
      cancel,
    ]);
  });

  it('holds a prefix literally, or any prefix a pattern matches', () => {
    const literal = brokerPermissions({ prefix: 'a.b-' }).dispatcher.permission.read;
    expect(matches(literal, 'a.b-webhook.completions')).toBe(true);
    expect(matches(literal, 'aXb-webhook.completions')).toBe(false);
    expect(matches(literal, 'webhook.completions')).toBe(false);
    const pattern = brokerPermissions({ prefixPattern: '[a-z]+-[0-9]\\.' }).dispatcher;
    expect(matches(pattern.permission.read, 'x-1.webhook.completions')).toBe(true);
    expect(matches(pattern.permission.read, 'x-1.inference.jobs')).toBe(false);
    expect(matches(pattern.topic.write, 'x-1.webhook.completions.retry')).toBe(true);
  });

  it('builds definitions RabbitMQ imports: hashed passwords, one user per service', () => {
    const definitions = brokerDefinitions({
      vhost: 'gw',
      users: [{ service: 'edge', name: 'gw-edge', password: 'secret' }],
    });
    const [user] = definitions.users;
    const salt = Buffer.from(user!.password_hash, 'base64').subarray(0, 4);
    expect(user).toEqual({
      name: 'gw-edge',
      password_hash: rabbitPasswordHash('secret', salt),
      hashing_algorithm: 'rabbit_password_hashing_sha256',
      tags: [],
    });
    expect(definitions.permissions).toEqual([
      { user: 'gw-edge', vhost: 'gw', ...access.edge.permission },
    ]);
    expect(definitions.topic_permissions).toEqual([
      { user: 'gw-edge', vhost: 'gw', ...access.edge.topic },
    ]);
    const twice = [
      { service: 'edge' as const, name: 'gw', password: 'a' },
      { service: 'billing' as const, name: 'gw', password: 'b' },
    ];
    expect(() => brokerDefinitions({ users: twice })).toThrow(/of its own/);
  });
});

/*
 * Against the test broker, whose users test-<service> have exactly these permissions (created
 * once by Jest's global setup): each service's bus declares its part and the messages flow;
 * what a service must not do is refused with ACCESS_REFUSED (403).
 */
describe('per-service broker users', () => {
  const prefix = uniquePrefix('access');
  const names = gatewayNames(prefix);
  const buses = {} as Record<BrokerService, MessageBus>;
  const received: Record<string, Delivery[]> = {};
  let replyQueue: string;
  let cancelQueue: string;
  let admin: ChannelModel;

  const busOf = (service: BrokerService) =>
    createGatewayBus({ AMQP_URL: testServiceAmqpUrl(service), AMQP_PREFIX: prefix }, silentLogger, {
      service,
      publishConfirmTimeoutMs: 2_000,
    });
  const collect = (queue: string, outcome: 'ack' | 'retry' = 'ack') => {
    received[queue] = [];
    return async (delivery: Delivery) => {
      received[queue]!.push(delivery);
      return outcome;
    };
  };

  beforeAll(async () => {
    admin = await connect(testAmqpUrl());
    // In the deployed order, each with its own credential and only its own declarations.
    for (const service of ['billing', 'dispatcher', 'inference-worker', 'edge'] as const) {
      buses[service] = busOf(service);
      await buses[service].start();
    }
    const { queues, exchanges, routingKeys } = names;
    await buses.billing.consume(queues.billingSettlements, collect(queues.billingSettlements), {
      prefetch: 1,
    });
    await buses.dispatcher.consume(
      queues.webhookCompletions,
      collect(queues.webhookCompletions, 'retry'),
      { prefetch: 1 },
    );
    cancelQueue = cancelQueueName(prefix, randomUUID());
    await buses['inference-worker'].declareQueue({
      name: cancelQueue,
      kind: 'transient',
      bindings: [{ exchange: exchanges.control, routingKey: routingKeys.cancelJob }],
    });
    await buses['inference-worker'].consume(cancelQueue, collect(cancelQueue), { prefetch: 1 });
    await buses['inference-worker'].consume(queues.inferenceJobs, collect(queues.inferenceJobs), {
      prefetch: 1,
    });
    replyQueue = replyQueueName(prefix, randomUUID());
    await buses.edge.declareQueue({
      name: replyQueue,
      kind: 'transient',
      outlivesConnection: {
        expiresMs: 60_000,
        messageTtlMs: 30_000,
        deadLetterQueue: queues.unreadReplies,
      },
    });
    await buses.edge.consume(replyQueue, collect(replyQueue), { prefetch: 1 });
  }, 30_000);

  afterAll(async () => {
    await Promise.all(Object.values(buses).map((bus) => bus.close()));
    await admin?.close();
  });

  it('carries every message of the job protocol, each service as its own user', async () => {
    const { queues, exchanges, routingKeys } = names;
    const worker = buses['inference-worker'];
    await buses.edge.publish(
      { exchange: exchanges.jobs, routingKey: routingKeys.defaultJob },
      { job: 1 },
      { replyTo: replyQueue },
    );
    await buses.edge.publish(
      { exchange: exchanges.control, routingKey: routingKeys.cancelJob },
      { cancel: 1 },
    );
    await waitUntil(() => received[queues.inferenceJobs]!.length === 1, 'the job');
    await waitUntil(() => received[cancelQueue]!.length === 1, 'the cancellation');
    const { replyTo } = received[queues.inferenceJobs]![0]!;
    await worker.publish({ queue: replyTo! }, { reply: 1 });
    await worker.publish({ queue: queues.billingSettlements }, { settlement: 1 });
    const completed = { exchange: exchanges.events, routingKey: routingKeys.inferenceCompleted };
    await worker.publish(completed, { completed: 'by the worker' });
    await buses.billing.publish(completed, { completed: 'by billing' });
    await waitUntil(() => received[replyQueue]!.length === 1, 'the reply');
    await waitUntil(() => received[queues.billingSettlements]!.length === 1, 'the settlement');
    await waitUntil(() => received[queues.webhookCompletions]!.length === 2, 'both events');
    // The dispatcher's `retry` parked both copies in its retry queue (by name, as itself).
    const channel = await admin.createChannel();
    let parked = 0;
    for (let tries = 0; parked < 2 && tries < 30; tries += 1) {
      parked = (await channel.checkQueue(`${queues.webhookCompletions}.retry`)).messageCount;
      if (parked < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(parked).toBe(2);
    await channel.close();
  });

  it('dead-letters a reply edge left unread to billing.unread-replies, which billing reads', async () => {
    const { queues } = names;
    const unreadQueue = replyQueueName(prefix, randomUUID());
    await buses.edge.declareQueue({
      name: unreadQueue,
      kind: 'transient',
      outlivesConnection: {
        expiresMs: 60_000,
        messageTtlMs: 300,
        deadLetterQueue: queues.unreadReplies,
      },
    });
    await buses.billing.consume(queues.unreadReplies, collect(queues.unreadReplies), {
      prefetch: 1,
    });
    // Nobody consumes the reply queue (its edge is gone).
    await buses['inference-worker'].publish({ queue: unreadQueue }, { reply: 'unread' });
    await waitUntil(() => received[queues.unreadReplies]!.length === 1, 'the unread reply');
    expect(received[queues.unreadReplies]![0]!.body).toEqual({ reply: 'unread' });
  });

  it("refuses the bus what the service's role does not include", async () => {
    const forbidden = (promise: Promise<unknown>) =>
      expect(promise).rejects.toMatchObject({ name: 'BusError', code: 'forbidden' });
    const { queues } = names;
    await forbidden(
      buses.dispatcher.consume(queues.inferenceJobs, async () => 'ack', { prefetch: 1 }),
    );
    await forbidden(buses['inference-worker'].publish({ queue: queues.webhookCompletions }, {}));
    await forbidden(buses.edge.publish({ queue: queues.billingSettlements }, {}));
    // A refusal costs nothing lasting: the buses stay healthy (ready).
    expect(BROKER_SERVICES.filter((s) => !buses[s].isHealthy())).toEqual([]);
  });

  /** Opens a connection as `service` and runs `operation` on a fresh channel; its 403, if any. */
  async function tryAs(
    service: BrokerService,
    operation: (channel: ConfirmChannel) => Promise<unknown>,
  ): Promise<number | 'allowed'> {
    const connection = await connect(testServiceAmqpUrl(service));
    connection.on('error', () => {});
    try {
      const channel = await connection.createConfirmChannel();
      let closedWith: number | undefined;
      channel.on('error', (err: { code?: number }) => (closedWith = err.code));
      try {
        await operation(channel);
        return 'allowed';
      } catch (error) {
        return (error as { code?: number }).code ?? closedWith ?? -1;
      }
    } finally {
      await connection.close().catch(() => {});
    }
  }
  type Operation = (channel: ConfirmChannel) => Promise<unknown>;
  const consume =
    (queue: string): Operation =>
    (channel) =>
      channel.consume(queue, () => {});
  const get =
    (queue: string): Operation =>
    (channel) =>
      channel.get(queue);
  const purge =
    (queue: string): Operation =>
    (channel) =>
      channel.purgeQueue(queue);
  const remove =
    (queue: string): Operation =>
    (channel) =>
      channel.deleteQueue(queue);
  /** A confirmed publish: a refusal closes the channel (403) before the confirm. */
  const publish =
    (exchange: string, routingKey: string): Operation =>
    (channel) => {
      channel.publish(exchange, routingKey, Buffer.from('{}'));
      return channel.waitForConfirms();
    };
  const toQueue = (queue: string) => publish(QUEUE_NAME_EXCHANGE, queue);
  const bind =
    (queue: string, exchange: string, key: string): Operation =>
    (channel) =>
      channel.bindQueue(queue, exchange, key);

  it('refuses the dispatcher the job queues, publishing jobs and other queues', async () => {
    const { queues, exchanges } = names;
    const attempts = {
      'consume inference.jobs': await tryAs('dispatcher', consume(queues.inferenceJobs)),
      'get inference.jobs.priority': await tryAs('dispatcher', get(queues.inferenceJobsPriority)),
      'publish to gateway.jobs': await tryAs('dispatcher', publish(exchanges.jobs, 'default')),
      'send to inference.jobs': await tryAs('dispatcher', toQueue(queues.inferenceJobs)),
      'send to inference.jobs.retry': await tryAs(
        'dispatcher',
        toQueue(`${queues.inferenceJobs}.retry`),
      ),
      'consume billing.settlements': await tryAs('dispatcher', consume(queues.billingSettlements)),
      'consume a reply queue': await tryAs('dispatcher', consume(replyQueue)),
      'send to its own queue': await tryAs('dispatcher', toQueue(queues.webhookCompletions)),
      'bind its queue to replies': await tryAs(
        'dispatcher',
        bind(queues.webhookCompletions, QUEUE_NAME_EXCHANGE, replyQueue),
      ),
      'bind its queue to gateway.jobs': await tryAs(
        'dispatcher',
        bind(queues.webhookCompletions, exchanges.jobs, 'default'),
      ),
    };
    expect(attempts).toEqual(Object.fromEntries(Object.keys(attempts).map((k) => [k, 403])));
  });

  it('refuses the worker billing.settlements, replies and events as a consumer', async () => {
    const { queues, exchanges } = names;
    const attempts = {
      'consume billing.settlements': await tryAs(
        'inference-worker',
        consume(queues.billingSettlements),
      ),
      'get billing.settlements': await tryAs('inference-worker', get(queues.billingSettlements)),
      'purge billing.settlements': await tryAs(
        'inference-worker',
        purge(queues.billingSettlements),
      ),
      'delete billing.settlements': await tryAs(
        'inference-worker',
        remove(queues.billingSettlements),
      ),
      "consume edge's reply queue": await tryAs('inference-worker', consume(replyQueue)),
      'consume webhook.completions': await tryAs(
        'inference-worker',
        consume(queues.webhookCompletions),
      ),
      'publish jobs': await tryAs('inference-worker', publish(exchanges.jobs, 'default')),
      'send to inference.jobs': await tryAs('inference-worker', toQueue(queues.inferenceJobs)),
      'send to webhook.completions': await tryAs(
        'inference-worker',
        toQueue(queues.webhookCompletions),
      ),
      'send to a .dead queue': await tryAs(
        'inference-worker',
        toQueue(`${queues.billingSettlements}.dead`),
      ),
      // Only edge's reply queues feed it, through the broker's dead-lettering.
      'forge an unread reply': await tryAs('inference-worker', toQueue(queues.unreadReplies)),
      'consume billing.unread-replies': await tryAs(
        'inference-worker',
        consume(queues.unreadReplies),
      ),
    };
    expect(attempts).toEqual(Object.fromEntries(Object.keys(attempts).map((k) => [k, 403])));
    // What it must do stays allowed (the flow test above does it through the bus).
    expect(await tryAs('inference-worker', toQueue(queues.billingSettlements))).toBe('allowed');
  });

  it('refuses edge the job queues, the settlement queue and the other services', async () => {
    const { queues, exchanges } = names;
    const attempts = {
      'consume inference.jobs': await tryAs('edge', consume(queues.inferenceJobs)),
      'consume billing.settlements': await tryAs('edge', consume(queues.billingSettlements)),
      'send a settlement': await tryAs('edge', toQueue(queues.billingSettlements)),
      'send an unread reply': await tryAs('edge', toQueue(queues.unreadReplies)),
      'consume billing.unread-replies': await tryAs('edge', consume(queues.unreadReplies)),
      'send to a reply queue': await tryAs('edge', toQueue(replyQueue)),
      "consume a worker's cancel queue": await tryAs('edge', consume(cancelQueue)),
      'publish an event': await tryAs('edge', publish(exchanges.events, 'inference.completed')),
      'delete inference.jobs': await tryAs('edge', remove(queues.inferenceJobs)),
    };
    expect(attempts).toEqual(Object.fromEntries(Object.keys(attempts).map((k) => [k, 403])));
  });

  it('refuses billing the job and reply queues and sending to queues', async () => {
    const { queues, exchanges } = names;
    const attempts = {
      'consume inference.jobs': await tryAs('billing', consume(queues.inferenceJobs)),
      'consume a reply queue': await tryAs('billing', consume(replyQueue)),
      'publish jobs': await tryAs('billing', publish(exchanges.jobs, 'default')),
      'send a settlement': await tryAs('billing', toQueue(queues.billingSettlements)),
      'consume webhook.completions': await tryAs('billing', consume(queues.webhookCompletions)),
    };
    expect(attempts).toEqual(Object.fromEntries(Object.keys(attempts).map((k) => [k, 403])));
  });

  it('lets no service delete or redeclare the exchange queues are addressed through', async () => {
    for (const service of BROKER_SERVICES) {
      expect(await tryAs(service, (c) => c.deleteExchange(QUEUE_NAME_EXCHANGE))).toBe(403);
    }
  });
});
