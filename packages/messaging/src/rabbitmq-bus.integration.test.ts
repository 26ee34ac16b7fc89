import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  freeLoopbackPort,
  startRabbitMqNode,
  testAmqpUrl,
  testBaseDir,
  uniquePrefix,
} from '@gateway/testing';
import type { RabbitMqNode } from '@gateway/testing';
import { BusError, silentLogger } from './bus.js';
import type { Delivery, MessageBus } from './bus.js';
import { busTestTopology, describeBusBehaviour, sleep, waitUntil } from './bus-behaviour.suite.js';
import { createRabbitMqBus } from './rabbitmq-bus.js';
import { gatewayNames, gatewayTopology } from './topology.js';

describeBusBehaviour('RabbitMQ', async (prefix) => {
  const bus = createRabbitMqBus({
    url: testAmqpUrl(),
    topology: busTestTopology(prefix),
    logger: silentLogger,
    drainTimeoutMs: 300,
  });
  await bus.start();
  return bus;
});

/** A bus on its own prefix (quick reconnects) and an admin connection to the same broker. */
async function busWithAdmin(name: string) {
  const prefix = uniquePrefix(name);
  const bus = createRabbitMqBus({
    url: testAmqpUrl(),
    topology: gatewayTopology(prefix),
    logger: silentLogger,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
  });
  const admin = await connect(testAmqpUrl());
  return { queues: gatewayNames(prefix).queues, bus, admin };
}

describe('RabbitMQ bus consumers', () => {
  it('resubscribe when the broker cancels them (here: their queue deleted)', async () => {
    const { queues, bus, admin } = await busWithAdmin('cancelled');
    try {
      await bus.start();
      const bodies: unknown[] = [];
      await bus.consume(queues.webhookCompletions, async (d) => (bodies.push(d.body), 'ack'), {
        prefetch: 1,
      });
      const channel = await admin.createChannel();
      await channel.deleteQueue(queues.webhookCompletions);
      await waitUntil(() => !bus.isHealthy(), 'unhealthy without its consumer');
      await waitUntil(() => bus.isHealthy(), 'healthy again');
      await bus.publish({ queue: queues.webhookCompletions }, 'after');
      await waitUntil(() => bodies.includes('after'), 'a delivery on the new subscription');
    } finally {
      await admin.close();
      await bus.close();
    }
  });
});

describe('RabbitMQ bus outcomes', () => {
  it('reports an outcome its channel could not take (the message was given back) as uncertain', async () => {
    const { queues, bus, admin } = await busWithAdmin('dropped');
    try {
      await bus.start();
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const dropped: { body: unknown; outcome: string }[] = [];
      await bus.consume(
        queues.webhookCompletions,
        async () => {
          await held;
          return 'ack';
        },
        {
          prefetch: 1,
          onOutcomeUncertain: (delivery, outcome) => dropped.push({ body: delivery.body, outcome }),
        },
      );
      await bus.publish({ queue: queues.webhookCompletions }, 'in hand');
      await sleep(200);
      // The broker cancels the consumer (its queue deleted) while the handler holds the delivery.
      const channel = await admin.createChannel();
      await channel.deleteQueue(queues.webhookCompletions);
      await waitUntil(() => !bus.isHealthy(), 'unhealthy without its consumer');
      release();
      await waitUntil(() => dropped.length > 0, 'the dropped outcome reported');
      expect(dropped).toEqual([{ body: 'in hand', outcome: 'ack' }]);
    } finally {
      await admin.close();
      await bus.close();
    }
  });

  it('reports the outcomes sent shortly before their channel closed, not older ones', async () => {
    const { queues, bus, admin } = await busWithAdmin('uncertain');
    try {
      await bus.start();
      const handled: unknown[] = [];
      const uncertain: { body: unknown; outcome: string }[] = [];
      await bus.consume(
        queues.webhookCompletions,
        async (delivery) => (handled.push(delivery.body), 'ack'),
        {
          prefetch: 1,
          uncertainWindowMs: 1_000,
          onOutcomeUncertain: (delivery, outcome) =>
            uncertain.push({ body: delivery.body, outcome }),
        },
      );
      await bus.publish({ queue: queues.webhookCompletions }, 'long acknowledged');
      await waitUntil(() => handled.length === 1, 'the first delivery');
      await sleep(1_500);
      await bus.publish({ queue: queues.webhookCompletions }, 'just acknowledged');
      await waitUntil(() => handled.length === 2, 'the second delivery');
      // Its channel closes right after (here: the broker cancels the consumer, and it reopens).
      const channel = await admin.createChannel();
      await channel.deleteQueue(queues.webhookCompletions);
      await waitUntil(() => uncertain.length > 0, 'the uncertain outcome reported');
      expect(uncertain).toEqual([{ body: 'just acknowledged', outcome: 'ack' }]);
    } finally {
      await admin.close();
      await bus.close();
    }
  });
});

describe('RabbitMQ bus start', () => {
  it('gives up within startTimeoutMs when no broker answers', async () => {
    const port = await freeLoopbackPort();
    const bus = createRabbitMqBus({
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      topology: gatewayTopology(uniquePrefix('nobroker')),
      logger: silentLogger,
      startTimeoutMs: 500,
      reconnect: { initialDelayMs: 50, maxDelayMs: 100 },
    });
    const started = Date.now();
    const error = await bus.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusError);
    expect((error as BusError).code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(bus.isHealthy()).toBe(false);
    await bus.close();
  });
});

describe('RabbitMQ bus across a broker restart', () => {
  let node: RabbitMqNode;
  let bus: MessageBus;

  beforeAll(async () => {
    const baseDir = mkdtempSync(path.join(testBaseDir(), 'messaging-restart-'));
    node = await startRabbitMqNode({ baseDir });
  }, 60_000);

  afterAll(async () => {
    await bus?.close();
    await node?.destroy();
  }, 60_000);

  it('reconnects, re-declares and resumes the same consumer; publishing during the outage is bounded', async () => {
    const prefix = uniquePrefix('restart');
    const { queues } = gatewayNames(prefix);
    const publishConfirmTimeoutMs = 1500;
    bus = createRabbitMqBus({
      url: node.url,
      topology: gatewayTopology(prefix),
      logger: silentLogger,
      publishConfirmTimeoutMs,
      reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
      drainTimeoutMs: 300,
    });
    await bus.start();

    // One message is held by the blocked handler, the others wait in the queue.
    let brokerStopped = false;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const afterRestart: Delivery[] = [];
    await bus.consume(
      queues.inferenceJobs,
      async (delivery) => {
        if (brokerStopped) afterRestart.push(delivery);
        await gate;
        return 'ack';
      },
      { prefetch: 1 },
    );
    for (const n of [1, 2, 3]) await bus.publish({ queue: queues.inferenceJobs }, n);
    await sleep(100);

    brokerStopped = true; // from here on, deliveries can only come from the new connection
    await node.stop();
    await waitUntil(() => !bus.isHealthy(), 'unhealthy while the broker is down', 5000);

    const started = Date.now();
    const outcome = await bus.publish({ queue: queues.inferenceJobs }, 'during-outage').then(
      () => 'published',
      (error: unknown) => error,
    );
    const elapsedMs = Date.now() - started;
    if (outcome !== 'published') {
      expect(outcome).toBeInstanceOf(BusError);
      expect((outcome as BusError).code).toBe('timeout');
    }
    expect(elapsedMs).toBeLessThan(publishConfirmTimeoutMs + 500);

    await node.start();
    await waitUntil(() => bus.isHealthy(), 'healthy after the broker restarted', 15_000);
    release();
    const persisted = () => afterRestart.filter((d) => typeof d.body === 'number');
    await waitUntil(() => persisted().length >= 3, 'the 3 persisted messages', 10_000);
    expect(persisted().map((d) => d.body)).toEqual([1, 2, 3]);
    // The one that was in flight when the broker went down comes back counted.
    expect(persisted().map((d) => d.deliveryCount)).toEqual([2, 1, 1]);

    // And the bus works normally again.
    await bus.publish({ queue: queues.inferenceJobs }, 4);
    await waitUntil(
      () => afterRestart.some((d) => d.body === 4),
      'a message published after the restart',
    );
  }, 60_000);
});

describe('RabbitMQ dead-letter retention', () => {
  it('declares .dead queues with the TTL and bound, and drops a dead letter after the TTL', async () => {
    const prefix = uniquePrefix('deadttl');
    const { queues } = gatewayNames(prefix);
    const deadLetters = { messageTtlMs: 1_000, maxLength: 5 };
    const bus = createRabbitMqBus({
      url: testAmqpUrl(),
      topology: gatewayTopology(prefix, deadLetters),
      logger: silentLogger,
      drainTimeoutMs: 300,
    });
    const admin = await connect(testAmqpUrl());
    const dead = `${queues.webhookCompletions}.dead`;
    const deadArguments = (messageTtlMs: number) => ({
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-max-length': 5,
        'x-overflow': 'drop-head',
        'x-message-ttl': messageTtlMs,
      },
    });
    try {
      await bus.start();
      // RabbitMQ accepts a redeclaration only with equivalent arguments: the queue has these.
      const check = await admin.createChannel();
      await check.assertQueue(dead, deadArguments(1_000));
      const refused = await admin.createChannel();
      refused.on('error', () => {});
      await expect(refused.assertQueue(dead, deadArguments(2_000))).rejects.toThrow(
        /PRECONDITION_FAILED/,
      );

      await bus.consume(queues.webhookCompletions, async () => 'dead-letter', { prefetch: 1 });
      await bus.publish({ queue: queues.webhookCompletions }, { prompt: 'kept only for a while' });
      let deadCount = 0;
      const countDead = async () => (deadCount = (await check.checkQueue(dead)).messageCount);
      const deadlineMs = Date.now() + 5_000;
      while ((await countDead()) === 0 && Date.now() < deadlineMs) await sleep(20);
      expect(deadCount).toBe(1);
      const landedMs = Date.now();
      while ((await countDead()) > 0 && Date.now() < landedMs + 10_000) await sleep(50);
      expect(deadCount).toBe(0);
      expect(Date.now() - landedMs).toBeGreaterThanOrEqual(700);
    } finally {
      await admin.close();
      await bus.close();
    }
  }, 30_000);
});

describe('a reply queue that outlives its connection', () => {
  it('keeps replies across a closed connection, and dead-letters one nobody read in time', async () => {
    const prefix = uniquePrefix('lasting');
    const { queues } = gatewayNames(prefix);
    const newBus = () =>
      createRabbitMqBus({
        url: testAmqpUrl(),
        topology: gatewayTopology(prefix),
        logger: silentLogger,
        reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      });
    const replies = `${prefix}edge.replies.test`;
    const spec = {
      name: replies,
      kind: 'transient' as const,
      outlivesConnection: {
        expiresMs: 60_000,
        messageTtlMs: 1_500,
        deadLetterQueue: queues.unreadReplies,
      },
    };
    const edge = newBus();
    const worker = newBus();
    try {
      await Promise.all([edge.start(), worker.start()]);
      await edge.declareQueue(spec);
      await edge.close();
      // Edge is away: a reply still finds its queue and waits there.
      await worker.publish({ queue: replies }, 'while away');
      const back = newBus();
      try {
        await back.start();
        await back.declareQueue(spec);
        const read: unknown[] = [];
        await back.consume(replies, async (d) => (read.push(d.body), 'ack'), { prefetch: 1 });
        await waitUntil(() => read.includes('while away'), 'the reply after the reconnect');
      } finally {
        await back.close();
      }
      // Nobody reads any more (edge died): past the TTL the reply goes to billing's queue.
      await worker.publish({ queue: replies }, 'unread');
      const unread: unknown[] = [];
      await worker.consume(queues.unreadReplies, async (d) => (unread.push(d.body), 'ack'), {
        prefetch: 1,
      });
      await waitUntil(() => unread.includes('unread'), 'the unread reply dead-lettered', 10_000);
    } finally {
      await worker.close();
    }
  }, 30_000);
});
