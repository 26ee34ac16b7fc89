import { BusError } from './bus.js';
import type { Envelope } from './envelope.js';
import { sameQueue } from './topology-plan.js';
import type { QueueDeclaration } from './topology-plan.js';

/**
 * A small in-memory broker with the RabbitMQ 3.10 behaviour the gateway relies on, measured
 * against a real node: direct and default-exchange routing, delivery limits (a message is
 * dead-lettered once it has been returned more than `deliveryLimit` times), returned messages
 * going back to their original position, TTL expiry at the queue head, dead-lettering,
 * max-length with reject-publish (quorum queues take one message over the limit) or
 * drop-head, and auto-delete of transient queues when their last consumer leaves.
 */

export interface StoredMessage {
  readonly seq: number;
  readonly envelope: Envelope;
  /** Times returned to the queue unacknowledged; deliveryCount is this plus one. */
  returns: number;
  expiresAt?: number;
}

export interface BrokerConsumer {
  readonly prefetch: number;
  /** False once cancelled: no new deliveries, but its unsettled ones stay its own. */
  active: boolean;
  /** Called with each delivery; the consumer settles it later through the broker. */
  deliver(message: StoredMessage): void;
}

interface QueueState {
  decl: QueueDeclaration;
  ready: StoredMessage[];
  consumers: Map<BrokerConsumer, Set<StoredMessage>>;
  turn: number;
  expiryTimer?: NodeJS.Timeout;
  dispatchScheduled: boolean;
}

export class InProcessBroker {
  private readonly queues = new Map<string, QueueState>();
  /** exchange -> bindings; the default exchange ('') routes by queue name instead. */
  private readonly bindings = new Map<string, { routingKey: string; queue: string }[]>();
  private seq = 0;
  private closed = false;

  declareExchange(name: string): void {
    if (!this.bindings.has(name)) this.bindings.set(name, []);
  }

  /** Creates the queue, or checks an existing one matches; bindings are additive. */
  declareQueue(decl: QueueDeclaration): void {
    const existing = this.queues.get(decl.name);
    if (existing && !sameQueue(existing.decl, decl)) {
      throw new BusError('conflict', `queue ${decl.name} exists with different arguments`);
    }
    if (!existing) {
      this.queues.set(decl.name, {
        decl,
        ready: [],
        consumers: new Map(),
        turn: 0,
        dispatchScheduled: false,
      });
    }
    for (const { exchange, routingKey } of decl.bindings) {
      const list = this.bindings.get(exchange);
      if (!list) throw new BusError('invalid-argument', `unknown exchange ${exchange}`);
      if (!list.some((b) => b.queue === decl.name && b.routingKey === routingKey)) {
        list.push({ routingKey, queue: decl.name });
      }
    }
  }

  queue(name: string): QueueDeclaration | undefined {
    return this.queues.get(name)?.decl;
  }

  /** Routes to every bound queue; all-or-nothing when one of them is full. */
  publish(exchange: string, routingKey: string, envelope: Envelope): void {
    this.checkOpen();
    const targets = this.route(exchange, routingKey);
    if (targets.length === 0) {
      throw new BusError('unroutable', `no queue bound to '${exchange}' with '${routingKey}'`);
    }
    const full = targets.find((q) => !hasRoom(q));
    if (full) throw new BusError('rejected', `queue ${full.decl.name} is full`);
    for (const target of targets) this.enqueue(target, envelope);
  }

  subscribe(queueName: string, consumer: BrokerConsumer): void {
    this.checkOpen();
    const queue = this.queues.get(queueName);
    if (!queue) throw new BusError('not-found', `no queue '${queueName}'`);
    queue.consumers.set(consumer, new Set());
    this.scheduleDispatch(queue);
  }

  /** Removes the consumer; its unsettled messages go back to the queue (counted as returns). */
  unsubscribe(queueName: string, consumer: BrokerConsumer): void {
    const queue = this.queues.get(queueName);
    const unacked = queue?.consumers.get(consumer);
    if (!queue || !unacked) return;
    queue.consumers.delete(consumer);
    for (const message of unacked) this.returnMessage(queue, message);
    if (
      queue.decl.kind === 'transient' &&
      !queue.decl.outlivesConnection &&
      queue.consumers.size === 0
    ) {
      this.deleteQueue(queue);
    } else this.scheduleDispatch(queue);
  }

  /** Settles one delivery; false when it was no longer the consumer's (already returned). */
  settle(
    queueName: string,
    consumer: BrokerConsumer,
    message: StoredMessage,
    action: 'ack' | 'requeue' | 'dead-letter',
  ): boolean {
    const queue = this.queues.get(queueName);
    const unacked = queue?.consumers.get(consumer);
    if (!queue || !unacked?.delete(message)) return false;
    if (action === 'requeue') this.returnMessage(queue, message);
    if (action === 'dead-letter') this.deadLetter(queue, message);
    this.scheduleDispatch(queue);
    return true;
  }

  close(): void {
    this.closed = true;
    for (const queue of this.queues.values()) clearTimeout(queue.expiryTimer);
  }

  private checkOpen(): void {
    if (this.closed) throw new BusError('closed', 'bus is closed');
  }

  private route(exchange: string, routingKey: string): QueueState[] {
    if (exchange === '') {
      const queue = this.queues.get(routingKey);
      return queue ? [queue] : [];
    }
    const names = (this.bindings.get(exchange) ?? [])
      .filter((b) => b.routingKey === routingKey)
      .map((b) => b.queue);
    return [...new Set(names)].flatMap((name) => this.queues.get(name) ?? []);
  }

  private enqueue(queue: QueueState, envelope: Envelope): void {
    const message: StoredMessage = { seq: ++this.seq, envelope, returns: 0 };
    const ttls = [queue.decl.messageTtlMs, envelope.expirationMs].filter((t) => t !== undefined);
    if (ttls.length > 0) message.expiresAt = Date.now() + Math.min(...ttls);
    queue.ready.push(message);
    // drop-head keeps the newest messages (dead letters); reject-publish was checked earlier.
    if (queue.decl.overflow === 'drop-head') {
      while (size(queue) > queue.decl.maxLength && queue.ready.length > 0) queue.ready.shift();
    }
    this.scheduleDispatch(queue);
  }

  /** RabbitMQ 3.10 puts a returned message back where it was, or dead-letters it. */
  private returnMessage(queue: QueueState, message: StoredMessage): void {
    message.returns += 1;
    const limit = queue.decl.deliveryLimit;
    if (limit !== undefined && message.returns > limit) {
      this.deadLetter(queue, message);
      return;
    }
    const at = queue.ready.findIndex((m) => m.seq > message.seq);
    queue.ready.splice(at === -1 ? queue.ready.length : at, 0, message);
  }

  /**
   * Like RabbitMQ, dead-lettering drops the per-message expiration. The broker's at-least-once
   * dead-lettering waits for room in a full target; in memory the target simply takes it.
   */
  private deadLetter(queue: QueueState, message: StoredMessage): void {
    const target = queue.decl.deadLetter;
    if (!target) return;
    const envelope = { ...message.envelope, expirationMs: undefined };
    for (const next of this.route(target.exchange, target.routingKey)) {
      this.enqueue(next, envelope);
    }
  }

  private deleteQueue(queue: QueueState): void {
    clearTimeout(queue.expiryTimer);
    this.queues.delete(queue.decl.name);
    for (const list of this.bindings.values()) {
      const kept = list.filter((b) => b.queue !== queue.decl.name);
      list.splice(0, list.length, ...kept);
    }
  }

  private scheduleDispatch(queue: QueueState): void {
    if (queue.dispatchScheduled || this.closed) return;
    queue.dispatchScheduled = true;
    // Deferred, so that settling inside a handler never re-enters the dispatch loop.
    setImmediate(() => {
      queue.dispatchScheduled = false;
      if (!this.closed && this.queues.get(queue.decl.name) === queue) this.dispatch(queue);
    });
  }

  private dispatch(queue: QueueState): void {
    this.expireHead(queue);
    while (queue.ready.length > 0) {
      const consumer = this.nextConsumer(queue);
      if (!consumer) break;
      const message = queue.ready.shift() as StoredMessage;
      queue.consumers.get(consumer)?.add(message);
      consumer.deliver(message);
    }
    this.expireHead(queue);
  }

  /** Round-robin over active consumers that are below their prefetch. */
  private nextConsumer(queue: QueueState): BrokerConsumer | undefined {
    const consumers = [...queue.consumers.entries()];
    for (let i = 0; i < consumers.length; i++) {
      const [consumer, unacked] = consumers[(queue.turn + i) % consumers.length]!;
      if (consumer.active && unacked.size < consumer.prefetch) {
        queue.turn = (queue.turn + i + 1) % consumers.length;
        return consumer;
      }
    }
    return undefined;
  }

  /** Like RabbitMQ, only the message at the head expires; a timer wakes up for the next one. */
  private expireHead(queue: QueueState): void {
    clearTimeout(queue.expiryTimer);
    queue.expiryTimer = undefined;
    const now = Date.now();
    let head = queue.ready[0];
    while (head?.expiresAt !== undefined && head.expiresAt <= now) {
      queue.ready.shift();
      this.deadLetter(queue, head);
      head = queue.ready[0];
    }
    if (head?.expiresAt === undefined) return;
    queue.expiryTimer = setTimeout(() => {
      if (!this.closed) this.dispatch(queue);
    }, head.expiresAt - now);
    queue.expiryTimer.unref();
  }
}

function size(queue: QueueState): number {
  let unacked = 0;
  for (const set of queue.consumers.values()) unacked += set.size;
  return queue.ready.length + unacked;
}

/** Quorum queues accept until they are over the limit; classic ones until they reach it. */
function hasRoom(queue: QueueState): boolean {
  if (queue.decl.overflow !== 'reject-publish') return true;
  const max = queue.decl.maxLength;
  return queue.decl.kind === 'quorum' ? size(queue) <= max : size(queue) < max;
}
