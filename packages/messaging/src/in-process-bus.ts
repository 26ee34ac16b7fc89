import { BusError, DEFAULT_DRAIN_TIMEOUT_MS, silentLogger } from './bus.js';
import type {
  BusLogger,
  ConsumeOptions,
  Consumer,
  Delivery,
  Destination,
  Handler,
  MessageBus,
  PublishOptions,
} from './bus.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  checkDestination,
  checkPrefetch,
  encodeEnvelope,
  readHeaders,
  retryCopy,
} from './envelope.js';
import { InProcessBroker } from './in-process-broker.js';
import type { BrokerConsumer, StoredMessage } from './in-process-broker.js';
import { decide, describe, errorSummary, InFlight, settlementFor } from './outcome.js';
import type { Settlement } from './outcome.js';
import type { Topology, QueueSpec } from './topology.js';
import { planQueue, planTopology } from './topology-plan.js';

export interface InProcessBusOptions {
  topology: Topology;
  logger?: BusLogger;
  /** How long cancel() and close() wait for in-flight handlers. */
  drainTimeoutMs?: number;
  maxMessageBytes?: number;
}

/**
 * The message bus of the one-process local mode: the same contract as the RabbitMQ bus, held
 * in memory (lost when the process exits). Bodies travel as JSON text, so publishers and
 * consumers never share objects.
 */
export function createInProcessBus(options: InProcessBusOptions): MessageBus {
  const logger = options.logger ?? silentLogger;
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const plan = planTopology(options.topology);
  const broker = new InProcessBroker();
  const consumers = new Set<Consumer>();
  let state: 'new' | 'started' | 'closed' = 'new';

  const requireStarted = (): void => {
    if (state !== 'started') throw new BusError('closed', `bus is ${state}, not started`);
  };

  return {
    async start() {
      if (state === 'closed') throw new BusError('closed', 'bus is closed');
      if (state === 'started') return;
      plan.exchanges.forEach((name) => broker.declareExchange(name));
      plan.queues.forEach((queue) => broker.declareQueue(queue));
      state = 'started';
    },

    async declareQueue(spec: QueueSpec) {
      requireStarted();
      const decls = planQueue(spec, options.topology, plan.exchanges);
      decls.forEach((queue) => broker.declareQueue(queue));
    },

    async publish(to: Destination, body: unknown, publishOptions: PublishOptions = {}) {
      requireStarted();
      const envelope = encodeEnvelope(body, publishOptions, maxMessageBytes);
      const { exchange, routingKey } = checkDestination(to, plan.exchanges);
      broker.publish(exchange, routingKey, envelope);
    },

    async consume<T>(queue: string, handler: Handler<T>, consumeOptions: ConsumeOptions) {
      requireStarted();
      checkPrefetch(consumeOptions.prefetch);
      const consumer = subscribe(broker, queue, handler, consumeOptions.prefetch, {
        logger,
        drainTimeoutMs,
        onOutcomeUncertain: consumeOptions.onOutcomeUncertain,
      });
      const handle: Consumer = {
        cancel: async () => {
          consumers.delete(handle);
          await consumer.cancel();
        },
      };
      consumers.add(handle);
      return handle;
    },

    isHealthy: () => state === 'started',

    async close() {
      if (state === 'closed') return;
      state = 'closed';
      await Promise.all([...consumers].map((c) => c.cancel()));
      broker.close();
    },
  };
}

function subscribe<T>(
  broker: InProcessBroker,
  queue: string,
  handler: Handler<T>,
  prefetch: number,
  context: {
    logger: BusLogger;
    drainTimeoutMs: number;
    onOutcomeUncertain: ConsumeOptions['onOutcomeUncertain'];
  },
): Consumer {
  const { logger } = context;
  const inFlight = new InFlight();
  let cancelled = false;

  const handle = async (message: StoredMessage): Promise<void> => {
    const leave = inFlight.enter();
    const delivery = toDelivery<T>(message, queue);
    try {
      const outcome = await decide(handler, delivery, logger);
      const settlement = settlementFor(outcome, delivery.retries, broker.queue(queue));
      settle(message, delivery, retryOrFallBack(message, delivery, settlement));
    } catch (error) {
      // Unreachable by design; a bug here must still not lose the message or crash.
      logger.error({ ...describe(delivery), err: errorSummary(error) }, 'delivery failed');
      broker.settle(queue, consumer, message, 'requeue');
    } finally {
      leave();
    }
  };

  /** `retry` = a copy in the retry queue, then ack; if the copy is refused, requeue instead. */
  const retryOrFallBack = (
    message: StoredMessage,
    delivery: Delivery<T>,
    settlement: Settlement,
  ): 'ack' | 'requeue' | 'dead-letter' => {
    if (settlement.kind !== 'retry') return settlement.kind;
    try {
      broker.publish('', settlement.queue, retryCopy(message.envelope, settlement.retries));
      return 'ack';
    } catch (error) {
      logger.warn({ ...describe(delivery), err: errorSummary(error) }, 'retry failed; requeue');
      return 'requeue';
    }
  };

  const settle = (
    message: StoredMessage,
    delivery: Delivery<T>,
    action: 'ack' | 'requeue' | 'dead-letter',
  ): void => {
    if (!broker.settle(queue, consumer, message, action)) {
      logger.warn(describe(delivery), 'outcome dropped: message already given back for redelivery');
      context.onOutcomeUncertain?.(delivery as Delivery, action);
    }
  };

  const consumer: BrokerConsumer = {
    prefetch,
    active: true,
    deliver: (message) => {
      if (!cancelled) void handle(message);
    },
  };
  broker.subscribe(queue, consumer);

  return {
    cancel: async () => {
      if (cancelled) return;
      cancelled = true;
      consumer.active = false;
      if (!(await inFlight.waitForIdle(context.drainTimeoutMs))) {
        logger.warn({ queue, inFlight: inFlight.size }, 'cancel: handlers still running');
      }
      broker.unsubscribe(queue, consumer);
    },
  };
}

function toDelivery<T>(message: StoredMessage, queue: string): Delivery<T> {
  const { envelope } = message;
  const { headers, retries } = readHeaders(envelope.headers);
  return {
    body: JSON.parse(envelope.content.toString('utf8')) as T,
    messageId: envelope.messageId,
    correlationId: envelope.correlationId,
    replyTo: envelope.replyTo,
    headers,
    deliveryCount: message.returns + 1,
    retries,
    queue,
  };
}
