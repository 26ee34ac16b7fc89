import type { Channel, ChannelModel } from 'amqplib';
import type { BusLogger } from './bus.js';
import { errorSummary } from './outcome.js';
import type { Session } from './rabbitmq-session.js';
import { QUEUE_NAME_EXCHANGE } from './topology.js';
import { queueOptions } from './topology-plan.js';
import type { QueueDeclaration } from './topology-plan.js';

/**
 * Declares exchanges, then queues and their bindings; safe to repeat on every reconnect.
 * Resolves with the transient queues that outlive their connection but could not be declared
 * because the one broker node holding them is down (a cluster): they are lost to this
 * connection, not a reason to fail it.
 */
export async function declareTopology(
  model: ChannelModel,
  exchanges: readonly string[],
  queues: readonly QueueDeclaration[],
): Promise<string[]> {
  const pinned = queues.filter((queue) => queue.kind === 'transient' && queue.outlivesConnection);
  await withChannel(model, async (channel) => {
    for (const name of exchanges) {
      await channel.assertExchange(name, 'direct', { durable: true, autoDelete: false });
    }
    await assertQueues(
      channel,
      queues.filter((queue) => !pinned.includes(queue)),
    );
  });
  const lost: string[] = [];
  // Each on a channel of its own: a refusal closes the channel it came on.
  for (const queue of pinned) {
    try {
      await withChannel(model, (channel) => assertQueues(channel, [queue]));
    } catch (error) {
      if (!isHomeNodeDown(error)) throw error;
      lost.push(queue.name);
    }
  }
  return lost;
}

/**
 * RabbitMQ answers 404 for a durable classic queue whose node is down ("home node ... of
 * durable queue ... is down or inaccessible"); it can only come back with that node.
 */
function isHomeNodeDown(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 404 && typeof message === 'string' && message.includes('home node');
}

export async function declareQueues(
  model: ChannelModel,
  queues: readonly QueueDeclaration[],
): Promise<void> {
  await withChannel(model, (channel) => assertQueues(channel, queues));
}

/**
 * Keeps a connection's errors from crashing the process (amqplib emits 'error' before the
 * recovering wrapper listens) and forgets the connection once it closes.
 */
export function watchConnection(model: ChannelModel, session: Session, logger: BusLogger): void {
  model.on('error', (err: Error) => {
    logger.warn({ err: errorSummary(err) }, 'RabbitMQ connection error');
  });
  model.once('close', () => session.clear(model));
}

/**
 * Each queue with its bindings, and bound to `QUEUE_NAME_EXCHANGE` under its own name: that is
 * how a message addressed to the queue (`{ queue }`, a retry copy, a dead letter) reaches it.
 */
async function assertQueues(channel: Channel, queues: readonly QueueDeclaration[]): Promise<void> {
  for (const queue of queues) {
    await channel.assertQueue(queue.name, queueOptions(queue));
    await channel.bindQueue(queue.name, QUEUE_NAME_EXCHANGE, queue.name);
    for (const { exchange, routingKey } of queue.bindings) {
      await channel.bindQueue(queue.name, exchange, routingKey);
    }
  }
}

/** A short-lived channel: a failed declaration closes it, never a long-lived one. */
async function withChannel(
  model: ChannelModel,
  work: (channel: Channel) => Promise<void>,
): Promise<void> {
  const channel = await model.createChannel();
  // The failure also rejects the pending declaration, which is what callers see.
  channel.on('error', () => {});
  try {
    await work(channel);
  } finally {
    await channel.close().catch(() => {});
  }
}
