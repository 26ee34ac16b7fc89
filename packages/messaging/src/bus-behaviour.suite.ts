import { afterEach, describe, expect, it } from '@jest/globals';
import { uniquePrefix } from '@gateway/testing';
import { BusError } from './bus.js';
import type { Delivery, Handler, MessageBus, Outcome } from './bus.js';
import { deadQueueName, gatewayNames, gatewayTopology } from './topology.js';
import type { Topology } from './topology.js';

/** Short limits so that delivery-limit and retry paths run in well under a second. */
export const TEST_LIMITS = { maxDeliveries: 3, retryDelayMs: 200, maxRetries: 2 } as const;

/** The gateway topology under `prefix`, with TEST_LIMITS on every queue. */
export function busTestTopology(prefix: string): Topology {
  const topology = gatewayTopology(prefix);
  return { ...topology, queues: topology.queues.map((q) => ({ ...q, ...TEST_LIMITS })) };
}

/**
 * The behaviour both MessageBus implementations share. `makeBus(prefix)` must return a started
 * bus on `busTestTopology(prefix)` with a drainTimeoutMs of at most 500 ms; the suite closes it.
 */
export function describeBusBehaviour(
  name: string,
  makeBus: (prefix: string) => Promise<MessageBus>,
): void {
  describe(`${name} bus behaviour`, () => {
    const open: MessageBus[] = [];
    const setUp = async () => {
      const prefix = uniquePrefix('bus');
      const bus = await makeBus(prefix);
      open.push(bus);
      return { bus, names: gatewayNames(prefix) };
    };

    afterEach(async () => {
      await Promise.all(open.splice(0).map((bus) => bus.close()));
    });

    it('publishes with confirm, and round-trips body, ids and headers', async () => {
      const { bus, names } = await setUp();
      expect(bus.isHealthy()).toBe(true);
      const body = { prompt: 'hello', tokens: [1, 2, 3], options: { temperature: 0.5 } };
      await bus.publish({ exchange: names.exchanges.jobs, routingKey: 'default' }, body, {
        messageId: 'm-1',
        correlationId: 'c-1',
        replyTo: 'reply-here',
        headers: { tenant: 't-1', attempt: 2, urgent: true },
      });
      body.prompt = 'changed after publishing';
      const inbox = new Inbox();
      await bus.consume(names.queues.inferenceJobs, inbox.handler(), { prefetch: 1 });
      const [delivery] = await inbox.waitFor(1);
      expect(delivery).toEqual({
        body: { prompt: 'hello', tokens: [1, 2, 3], options: { temperature: 0.5 } },
        messageId: 'm-1',
        correlationId: 'c-1',
        replyTo: 'reply-here',
        headers: { tenant: 't-1', attempt: 2, urgent: true },
        deliveryCount: 1,
        retries: 0,
        queue: names.queues.inferenceJobs,
      });
    });

    it('routes by exchange binding and by queue name, and rejects what it cannot route', async () => {
      const { bus, names } = await setUp();
      const { exchanges, queues, routingKeys } = names;
      const inboxes = new Map(Object.values(queues).map((q) => [q, new Inbox()]));
      for (const [queue, inbox] of inboxes)
        await bus.consume(queue, inbox.handler(), { prefetch: 5 });
      await bus.publish({ exchange: exchanges.jobs, routingKey: routingKeys.priorityJob }, 'p');
      await bus.publish(
        { exchange: exchanges.events, routingKey: routingKeys.inferenceCompleted },
        'e',
      );
      await bus.publish({ queue: queues.inferenceJobs }, 'q');
      expect(bodies(await inboxes.get(queues.inferenceJobsPriority)!.waitFor(1))).toEqual(['p']);
      expect(bodies(await inboxes.get(queues.webhookCompletions)!.waitFor(1))).toEqual(['e']);
      expect(bodies(await inboxes.get(queues.inferenceJobs)!.waitFor(1))).toEqual(['q']);

      await expectBusError(
        bus.publish({ exchange: exchanges.jobs, routingKey: 'nope' }, 1),
        'unroutable',
      );
      await expectBusError(
        bus.publish({ queue: `${queues.inferenceJobs}.missing` }, 1),
        'unroutable',
      );
      await expectBusError(
        bus.publish({ exchange: 'not-declared', routingKey: 'x' }, 1),
        'invalid-argument',
      );
    });

    it('never runs more handlers at once than the prefetch', async () => {
      const { bus, names } = await setUp();
      let running = 0;
      let most = 0;
      let done = 0;
      await bus.consume(
        names.queues.inferenceJobs,
        async () => {
          running += 1;
          most = Math.max(most, running);
          await sleep(40);
          running -= 1;
          done += 1;
          return 'ack';
        },
        { prefetch: 3 },
      );
      for (let i = 0; i < 12; i++) await bus.publish({ queue: names.queues.inferenceJobs }, i);
      await waitUntil(() => done === 12, 'all 12 handled');
      expect(most).toBe(3);
    });

    it('requeue redelivers at once with deliveryCount + 1', async () => {
      const { bus, names } = await setUp();
      const inbox = new Inbox();
      await bus.consume(names.queues.inferenceJobs, inbox.handler(['requeue', 'ack']), {
        prefetch: 1,
      });
      await bus.publish({ queue: names.queues.inferenceJobs }, 'again');
      const deliveries = await inbox.waitFor(2);
      expect(deliveries.map((d) => d.deliveryCount)).toEqual([1, 2]);
      expect(bodies(deliveries)).toEqual(['again', 'again']);
    });

    it(`always requeueing ends in .dead after exactly maxDeliveries (${TEST_LIMITS.maxDeliveries}) deliveries`, async () => {
      const { bus, names } = await setUp();
      const queue = names.queues.inferenceJobs;
      const inbox = new Inbox();
      const dead = new Inbox();
      await bus.consume(queue, inbox.handler('requeue'), { prefetch: 1 });
      await bus.consume(deadQueueName(queue), dead.handler(), { prefetch: 1 });
      await bus.publish({ queue }, 'poison', { messageId: 'p-1' });
      const [deadLetter] = await dead.waitFor(1);
      await sleep(200);
      expect(inbox.items.map((d) => d.deliveryCount)).toEqual([1, 2, 3]);
      expect(deadLetter).toMatchObject({ body: 'poison', messageId: 'p-1', deliveryCount: 1 });
    });

    it('dead-letter moves the message to .dead at once', async () => {
      const { bus, names } = await setUp();
      const queue = names.queues.webhookCompletions;
      const inbox = new Inbox();
      const dead = new Inbox();
      await bus.consume(queue, inbox.handler('dead-letter'), { prefetch: 1 });
      await bus.consume(deadQueueName(queue), dead.handler(), { prefetch: 1 });
      await bus.publish({ queue }, { hook: 1 }, { headers: { tenant: 't' } });
      const [deadLetter] = await dead.waitFor(1);
      expect(deadLetter).toMatchObject({ body: { hook: 1 }, headers: { tenant: 't' } });
      expect(inbox.items).toHaveLength(1);
    });

    it(`retry comes back after retryDelayMs with retries + 1, and ends in .dead after maxRetries`, async () => {
      const { bus, names } = await setUp();
      const queue = names.queues.inferenceJobsPriority;
      const inbox = new Inbox();
      const dead = new Inbox();
      await bus.consume(queue, inbox.handler('retry'), { prefetch: 1 });
      await bus.consume(deadQueueName(queue), dead.handler(), { prefetch: 1 });
      await bus.publish({ queue }, 'later', { messageId: 'r-1', headers: { kind: 'job' } });
      const [deadLetter] = await dead.waitFor(1, 5000);
      expect(inbox.items.map((d) => d.retries)).toEqual([0, 1, 2]);
      expect(inbox.items.map((d) => d.deliveryCount)).toEqual([1, 1, 1]);
      const gaps = inbox.times.slice(1).map((t, i) => t - inbox.times[i]!);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(TEST_LIMITS.retryDelayMs - 20);
      expect(deadLetter).toMatchObject({ body: 'later', messageId: 'r-1', retries: 2 });
      expect(deadLetter!.headers).toEqual({ kind: 'job' });
    });

    it('a handler that throws counts as requeue', async () => {
      const { bus, names } = await setUp();
      const inbox = new Inbox();
      const failOnce: Handler = async (delivery) => {
        inbox.record(delivery);
        if (delivery.deliveryCount === 1) throw new Error('boom');
        return 'ack';
      };
      await bus.consume(names.queues.inferenceJobs, failOnce, { prefetch: 1 });
      await bus.publish({ queue: names.queues.inferenceJobs }, 'x');
      await inbox.waitFor(2);
      await sleep(100);
      expect(inbox.items.map((d) => d.deliveryCount)).toEqual([1, 2]);
    });

    it('cancelling a consumer hands its unacked message to the next consumer', async () => {
      const { bus, names } = await setUp();
      const queue = names.queues.inferenceJobs;
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      const first = new Inbox();
      const stuck = await bus.consume(
        queue,
        async (delivery) => {
          first.record(delivery);
          await gate;
          return 'ack';
        },
        { prefetch: 1 },
      );
      await bus.publish({ queue }, 'handed-over');
      await first.waitFor(1);
      const second = new Inbox();
      await bus.consume(queue, second.handler(), { prefetch: 1 });
      await stuck.cancel(); // the handler is still blocked: cancel gives up after its bound
      const [redelivered] = await second.waitFor(1);
      release();
      await sleep(200);
      expect(redelivered).toMatchObject({ body: 'handed-over', deliveryCount: 2 });
      expect(second.items).toHaveLength(1);
    });

    it('round-trips through a transient reply queue', async () => {
      const { bus, names } = await setUp();
      const replyQueue = `${names.queues.inferenceJobs}.reply-test`;
      await bus.declareQueue({ name: replyQueue, kind: 'transient' });
      const inbox = new Inbox();
      await bus.consume(replyQueue, inbox.handler(), { prefetch: 10 });
      await bus.publish({ queue: replyQueue }, { answer: 42 }, { correlationId: 'req-7' });
      const [reply] = await inbox.waitFor(1);
      expect(reply).toMatchObject({
        body: { answer: 42 },
        correlationId: 'req-7',
        queue: replyQueue,
      });
      const bad = bus.declareQueue({ name: `${replyQueue}2`, kind: 'transient', maxDeliveries: 2 });
      await expectBusError(bad, 'invalid-argument');
      const changed = bus.declareQueue({ name: replyQueue, kind: 'transient', maxLength: 5 });
      await expectBusError(changed, 'conflict');
    });

    it('dead-letters a message whose expirationMs passed before delivery', async () => {
      const { bus, names } = await setUp();
      const queue = names.queues.inferenceJobs;
      await bus.publish({ queue }, 'stale', { expirationMs: 50 });
      await sleep(300);
      const inbox = new Inbox();
      const dead = new Inbox();
      await bus.consume(queue, inbox.handler(), { prefetch: 1 });
      await bus.consume(deadQueueName(queue), dead.handler(), { prefetch: 1 });
      expect(bodies(await dead.waitFor(1))).toEqual(['stale']);
      expect(inbox.items).toHaveLength(0);
    });

    it('rejects bad arguments with BusError codes', async () => {
      const { bus, names } = await setUp();
      const queue = names.queues.inferenceJobs;
      const ack: Handler = async () => 'ack';
      await expectBusError(bus.consume(queue, ack, { prefetch: 0 }), 'invalid-argument');
      await expectBusError(bus.consume(queue, ack, { prefetch: 1001 }), 'invalid-argument');
      await expectBusError(bus.consume(`${queue}.nothing`, ack, { prefetch: 1 }), 'not-found');
      const reserved = bus.publish({ queue }, 1, { headers: { 'x-retries': 5 } });
      await expectBusError(reserved, 'invalid-argument');
      await expectBusError(bus.publish({ queue }, 'x'.repeat(5 * 1024 * 1024)), 'invalid-argument');
      await expectBusError(bus.publish({ queue }, undefined), 'invalid-argument');
      expect(bus.isHealthy()).toBe(true);
    });

    it('rejects use after close', async () => {
      const { bus, names } = await setUp();
      await bus.close();
      expect(bus.isHealthy()).toBe(false);
      await expectBusError(bus.publish({ queue: names.queues.inferenceJobs }, 1), 'closed');
    });
  });
}

/** Records deliveries (and when they arrived) and answers with scripted outcomes. */
class Inbox {
  readonly items: Delivery[] = [];
  readonly times: number[] = [];

  record(delivery: Delivery): void {
    this.items.push(delivery);
    this.times.push(Date.now());
  }

  /** One outcome for every delivery, or a script (the last entry repeats). */
  handler(outcomes: Outcome | Outcome[] = 'ack'): Handler {
    const script = Array.isArray(outcomes) ? outcomes : [outcomes];
    return async (delivery) => {
      this.record(delivery);
      return script[Math.min(this.items.length, script.length) - 1]!;
    };
  }

  async waitFor(count: number, timeoutMs = 3000): Promise<Delivery[]> {
    await waitUntil(() => this.items.length >= count, `${count} deliveries`, timeoutMs);
    return this.items.slice(0, count);
  }
}

const bodies = (deliveries: Delivery[]) => deliveries.map((d) => d.body);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitUntil(check: () => boolean, what: string, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

async function expectBusError(promise: Promise<unknown>, code: BusError['code']): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BusError);
  expect((error as BusError).code).toBe(code);
}
