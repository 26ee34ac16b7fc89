import { describe, expect, it } from '@jest/globals';
import { BusError } from './bus.js';
import { gatewayNames, gatewayTopology } from './topology.js';
import { planTopology, queueOptions } from './topology-plan.js';

describe('gateway topology', () => {
  const plan = planTopology(gatewayTopology('p.'));
  const declared = (name: string) => {
    const queue = plan.queues.find((q) => q.name === name);
    if (!queue) throw new Error(`${name} not declared`);
    return queue;
  };

  it('prefixes every exchange and queue, and declares the dead-letter exchange', () => {
    const names = gatewayNames('p.');
    expect(plan.exchanges).toEqual([
      'p.gateway.jobs',
      'p.gateway.events',
      'p.gateway.control',
      'p.gateway.dlx',
    ]);
    // Billing's queues have no delayed-retry queue: billing retries in place.
    const { billingSettlements, unreadReplies, ...retried } = names.queues;
    expect(plan.queues.map((q) => q.name)).toEqual([
      ...Object.values(retried).flatMap((q) => [q, `${q}.dead`, `${q}.retry`]),
      billingSettlements,
      `${billingSettlements}.dead`,
      unreadReplies,
      `${unreadReplies}.dead`,
    ]);
  });

  it('declares the settlement outbox unbound (published to by name), long-lived and bounded', () => {
    const settlements = declared('p.billing.settlements');
    expect(settlements.bindings).toEqual([]);
    expect(queueOptions(settlements).arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-delivery-limit': 49,
      'x-dead-letter-routing-key': 'p.billing.settlements',
      'x-max-length': 1_000_000,
    });
    expect(settlements.retry).toBeUndefined();
  });

  it("declares edge's unread replies a queue of their own, unbound (dead-lettered to by name)", () => {
    const unread = declared('p.billing.unread-replies');
    expect(unread.bindings).toEqual([]);
    expect(queueOptions(unread).arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-delivery-limit': 49,
      'x-dead-letter-routing-key': 'p.billing.unread-replies',
      'x-max-length': 1_000_000,
    });
    expect(unread.retry).toBeUndefined();
  });

  it('gives quorum queues a delivery limit, at-least-once dead-lettering and a bound', () => {
    const jobs = declared('p.inference.jobs');
    expect(jobs.bindings).toEqual([{ exchange: 'p.gateway.jobs', routingKey: 'default' }]);
    expect(queueOptions(jobs)).toEqual({
      durable: true,
      exclusive: false,
      autoDelete: false,
      arguments: {
        'x-queue-type': 'quorum',
        // RabbitMQ counts returns: maxDeliveries 5 = the first delivery + 4 returns.
        'x-delivery-limit': 4,
        'x-dead-letter-exchange': 'p.gateway.dlx',
        'x-dead-letter-routing-key': 'p.inference.jobs',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
        'x-max-length': 100_000,
      },
    });
    expect(jobs.retry).toEqual({ queue: 'p.inference.jobs.retry', maxRetries: 3 });
  });

  it('parks retries in a TTL queue that dead-letters back to its queue by name (amq.topic)', () => {
    // Not through the default exchange: declaring that needs `write` on amq.default, which
    // would let the declarer publish to every queue of the vhost (broker-access.ts).
    expect(queueOptions(declared('p.webhook.completions.retry')).arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-message-ttl': 30_000,
      'x-dead-letter-exchange': 'amq.topic',
      'x-dead-letter-routing-key': 'p.webhook.completions',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
      'x-max-length': 100_000,
    });
  });

  it('binds each .dead queue to the dead-letter exchange under its source queue name', () => {
    const dead = declared('p.inference.jobs.priority.dead');
    expect(dead.bindings).toEqual([
      { exchange: 'p.gateway.dlx', routingKey: 'p.inference.jobs.priority' },
    ]);
    expect(queueOptions(dead).arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-overflow': 'drop-head',
      'x-max-length': 10_000,
      'x-message-ttl': 72 * 60 * 60 * 1000,
    });
  });

  it('bounds every .dead queue by the configured retention, and refuses a bad one', () => {
    const deadLetters = { messageTtlMs: 5_000, maxLength: 7 };
    const deadQueues = planTopology(gatewayTopology('p.', deadLetters)).queues.filter((q) =>
      q.name.endsWith('.dead'),
    );
    expect(deadQueues).toHaveLength(5);
    for (const dead of deadQueues) {
      expect(queueOptions(dead).arguments).toMatchObject({
        'x-message-ttl': 5_000,
        'x-max-length': 7,
        'x-overflow': 'drop-head',
      });
      // Expired dead letters are dropped, not dead-lettered again.
      expect(queueOptions(dead).arguments['x-dead-letter-exchange']).toBeUndefined();
    }
    for (const bad of [
      { messageTtlMs: 0, maxLength: 7 },
      { messageTtlMs: 1.5, maxLength: 7 },
    ]) {
      expect(() => planTopology(gatewayTopology('p.', bad))).toThrow(/dead letters: messageTtlMs/);
    }
  });

  it('declares transient queues classic, exclusive and auto-delete', () => {
    const topology = {
      ...gatewayTopology('p.'),
      queues: [{ name: 'p.reply', kind: 'transient' as const }],
    };
    const [reply] = planTopology(topology).queues;
    expect(queueOptions(reply!)).toEqual({
      durable: false,
      exclusive: true,
      autoDelete: true,
      arguments: { 'x-max-length': 10_000, 'x-overflow': 'reject-publish' },
    });
  });

  it.each([
    ['an undeclared exchange', { bindings: [{ exchange: 'nope', routingKey: 'k' }] }],
    ['maxDeliveries out of range', { maxDeliveries: 101 }],
    ['a fractional retry delay', { retryDelayMs: 1.5 }],
    ['a reserved name', { name: 'amq.jobs' }],
  ])('rejects a queue with %s', (_label, change) => {
    const topology = gatewayTopology('p.');
    topology.queues[0] = { ...topology.queues[0]!, ...change };
    expect(() => planTopology(topology)).toThrow(BusError);
  });

  it('rejects a queue declared twice, including through a derived name', () => {
    const topology = gatewayTopology('p.');
    topology.queues.push({ name: 'p.inference.jobs.dead', kind: 'quorum' });
    expect(() => planTopology(topology)).toThrow(/declared twice/);
  });
});
