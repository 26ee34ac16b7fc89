import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { startRabbitMqCluster, testBaseDir, uniquePrefix } from '@gateway/testing';
import type { RabbitMqCluster } from '@gateway/testing';
import { BusError, silentLogger, type MessageBus } from './bus.js';
import { waitUntil } from './bus-behaviour.suite.js';
import { createRabbitMqBus } from './rabbitmq-bus.js';
import { gatewayNames, gatewayTopology } from './topology.js';

/*
 * The bus on a three-node cluster, through one balancing address (a Kubernetes Service in
 * production): what a node's death does to the queues that live on it alone.
 */

let cluster: RabbitMqCluster;

beforeAll(async () => {
  cluster = await startRabbitMqCluster({
    baseDir: mkdtempSync(path.join(testBaseDir(), 'cluster-')),
  });
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
}, 60_000);

/** The node a classic queue lives on, from its process id (`<name@host.1.2.3>`). */
async function homeNodeOf(queue: string): Promise<string> {
  const listing = await cluster.ctl('list_queues', '--quiet', '--no-table-headers', 'name', 'pid');
  const line = listing.split('\n').find((row) => row.startsWith(`${queue}\t`));
  const node = /<([^.>]+@[^.>]+)\./.exec(line ?? '')?.[1];
  if (!node) throw new Error(`no home node for ${queue} in:\n${listing}`);
  return node;
}

describe('RabbitMQ bus on a cluster', () => {
  it('gives up a connection-outliving queue whose node died, reconnects, and the quorum queues carry on', async () => {
    const prefix = uniquePrefix('cluster');
    const names = gatewayNames(prefix);
    const bus = createRabbitMqBus({
      url: cluster.url,
      topology: gatewayTopology(prefix),
      logger: silentLogger,
      reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
    });
    const replies = `${prefix}edge.replies.one`;
    const lost: string[] = [];
    try {
      await bus.start();
      await bus.declareQueue(
        {
          name: replies,
          kind: 'transient',
          outlivesConnection: {
            expiresMs: 60_000,
            messageTtlMs: 30_000,
            deadLetterQueue: names.queues.unreadReplies,
          },
        },
        { onLost: () => lost.push(replies) },
      );
      await bus.consume(replies, async () => 'ack', { prefetch: 1 });
      const completions: unknown[] = [];
      await bus.consume(
        names.queues.webhookCompletions,
        async (delivery) => (completions.push(delivery.body), 'ack'),
        { prefetch: 1 },
      );
      const homeName = await homeNodeOf(replies);
      const node = cluster.nodes.find((candidate) => candidate.nodeName === homeName);
      if (!node) throw new Error(`${homeName} is not a node of the cluster`);
      await node.kill();
      try {
        // Without the give-up, every reconnect failed on the queue (404, home node down) and
        // the bus stayed down until that node came back.
        await waitUntil(() => lost.length === 1, 'the lost queue reported', 20_000);
        await waitUntil(() => bus.isHealthy(), 'healthy again with the node still down', 20_000);
        await publishOnceAccepted(bus, names.queues.webhookCompletions, 'after', 20_000);
        await waitUntil(() => completions.includes('after'), 'a quorum queue delivers', 20_000);
      } finally {
        await node.start();
      }
    } finally {
      await bus.close();
    }
  }, 120_000);
});

/**
 * Publishes `body` until the broker accepts it, within `timeoutMs`. Once, on a loaded CI machine,
 * the first publish after the kill was refused (a nack), most likely while the quorum queue's
 * remaining members elected a leader in place of one on the killed node: what must hold is that
 * the queue accepts again with a node down, not on the first try.
 */
async function publishOnceAccepted(
  bus: MessageBus,
  queue: string,
  body: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await bus.publish({ queue }, body);
      return;
    } catch (error) {
      const refused = error instanceof BusError && error.code === 'rejected';
      if (!refused || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
