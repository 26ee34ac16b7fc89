import { connect } from 'amqplib';
import { serviceTopology } from './broker-access.js';
import type { BrokerService } from './broker-access.js';
import { DEFAULT_DEAD_LETTER_RETENTION, gatewayTopology } from './topology.js';
import type { ChannelModel, RecoveringChannelModel } from 'amqplib';
import { BusError, DEFAULT_DRAIN_TIMEOUT_MS } from './bus.js';
import type { BusLogger, ConsumeOptions, Destination, Handler, MessageBus } from './bus.js';
import type { DeclareQueueOptions, PublishOptions } from './bus.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  checkDestination,
  checkPrefetch,
  encodeEnvelope,
} from './envelope.js';
import { errorSummary, withTimeout } from './outcome.js';
import { DEFAULT_UNCERTAIN_WINDOW_MS, RabbitMqConsumer } from './rabbitmq-consumer.js';
import type { ConsumerContext } from './rabbitmq-consumer.js';
import { declareQueues, declareTopology, watchConnection } from './rabbitmq-declare.js';
import { ConfirmPublisher } from './rabbitmq-publisher.js';
import { Session } from './rabbitmq-session.js';
import type { QueueSpec, Topology } from './topology.js';
import { planQueue, planTopology, sameQueue } from './topology-plan.js';
import { traceBus } from './traced-bus.js';
import type { QueueDeclaration } from './topology-plan.js';

export interface RabbitMqBusOptions {
  /** amqp:// URL; it holds credentials, so it is never logged. */
  url: string;
  topology: Topology;
  logger: BusLogger;
  /** Bound on publish(), including any wait for a reconnect. */
  publishConfirmTimeoutMs?: number;
  /** Backoff between reconnect attempts (doubling, with jitter). */
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  /** Bound on start() reaching the broker the first time. */
  startTimeoutMs?: number;
  /** Bound on declareQueue() and consume() waiting for a connection. */
  operationTimeoutMs?: number;
  drainTimeoutMs?: number;
  maxMessageBytes?: number;
}

const DEFAULTS = {
  publishConfirmTimeoutMs: 5_000,
  reconnect: { initialDelayMs: 200, maxDelayMs: 5_000 },
  startTimeoutMs: 30_000,
  operationTimeoutMs: 10_000,
};

/**
 * The MessageBus on RabbitMQ (3.10+). amqplib's opt-in recovery reconnects with backoff; each
 * (re)connect's setup declares the topology and the extra queues again, opens a fresh confirm
 * channel and re-attaches every registered consumer on a channel of its own.
 */
export function createRabbitMqBus(options: RabbitMqBusOptions): MessageBus {
  const { logger } = options;
  const plan = planTopology(options.topology);
  const settings = {
    publishConfirmTimeoutMs: options.publishConfirmTimeoutMs ?? DEFAULTS.publishConfirmTimeoutMs,
    reconnect: options.reconnect ?? DEFAULTS.reconnect,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULTS.startTimeoutMs,
    operationTimeoutMs: options.operationTimeoutMs ?? DEFAULTS.operationTimeoutMs,
  };
  const queues = new Map<string, QueueDeclaration>(plan.queues.map((q) => [q.name, q]));
  const session = new Session();
  const publisher = new ConfirmPublisher(session, logger);
  const consumers = new Set<RabbitMqConsumer>();
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  let connection: RecoveringChannelModel | null = null;
  let state: 'new' | 'started' | 'closed' = 'new';
  let starting: Promise<void> | null = null;

  const onLost = new Map<string, () => void>();

  /** A queue whose node is gone: forgotten, its consumers cancelled, its owner told. */
  const giveUp = (name: string): void => {
    queues.delete(name);
    for (const consumer of consumers) {
      if (consumer.queue !== name) continue;
      consumers.delete(consumer);
      void consumer.cancel();
    }
    logger.warn({ queue: name }, "queue's broker node is down: queue given up");
    const lost = onLost.get(name);
    onLost.delete(name);
    // After the setup that found it lost: the owner's new queue needs the connection ready.
    if (lost) setImmediate(lost);
  };

  const declareAll = async (model: ChannelModel): Promise<void> => {
    const lost = await declareTopology(model, plan.exchanges, [...queues.values()]);
    lost.forEach(giveUp);
  };

  const context: ConsumerContext = {
    session,
    publisher,
    logger,
    queueInfo: (name) => queues.get(name),
    redeclare: declareAll,
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    publishConfirmTimeoutMs: settings.publishConfirmTimeoutMs,
    reconnect: settings.reconnect,
  };

  const setup = async (model: ChannelModel): Promise<void> => {
    watchConnection(model, session, logger);
    await declareAll(model);
    await publisher.attach(model);
    session.set(model);
    await Promise.all(
      [...consumers].map((consumer) =>
        consumer.attach(model).catch((err) => {
          logger.error({ queue: consumer.queue, err: errorSummary(err) }, 'resume failed');
          consumer.scheduleReattach();
        }),
      ),
    );
    logger.info({ consumers: consumers.size }, 'RabbitMQ connected: topology declared');
  };

  /** Resolves once the first setup ran; gives up (and closes) after startTimeoutMs. */
  const connectFirst = async (): Promise<void> => {
    const opened = await openConnection(options.url, settings.reconnect, setup, logger);
    if (state === 'closed') {
      // close() ran while the connection was being created: it could not close this one.
      await opened.close();
      throw new BusError('closed', 'bus closed while starting');
    }
    connection = opened;
    let lastFailure = 'none';
    opened.on('connect-failed', (err: Error) => (lastFailure = err.message));
    const bound = settings.startTimeoutMs;
    const timedOut = () =>
      new BusError('timeout', `not connected within ${bound} ms (last failure: ${lastFailure})`);
    try {
      await withTimeout(opened.waitForConnect(), bound, timedOut);
    } catch (error) {
      await opened.close().catch(() => {});
      connection = null;
      throw error;
    }
    if (state === 'new') state = 'started';
  };

  const requireStarted = (): void => {
    if (state !== 'started') throw new BusError('closed', `bus is ${state}, not started`);
  };

  return {
    start() {
      if (state === 'closed') return Promise.reject(new BusError('closed', 'bus is closed'));
      // Concurrent callers share one connection attempt.
      starting ??= connectFirst().catch((error: unknown) => {
        starting = null;
        throw error;
      });
      return starting;
    },

    async declareQueue(spec: QueueSpec, declareOptions: DeclareQueueOptions = {}) {
      requireStarted();
      const decls = planQueue(spec, options.topology, plan.exchanges);
      for (const decl of decls) {
        const known = queues.get(decl.name);
        if (known && !sameQueue(known, decl)) {
          throw new BusError('conflict', `queue ${decl.name} exists with different arguments`);
        }
      }
      const model = await session.wait(settings.operationTimeoutMs);
      await declareQueues(model, decls).catch((error: unknown) => {
        throw asBusError(error, spec.name);
      });
      for (const decl of decls) {
        const bindings = [...(queues.get(decl.name)?.bindings ?? []), ...decl.bindings];
        queues.set(decl.name, { ...decl, bindings: uniqueBindings(bindings) });
      }
      if (declareOptions.onLost) onLost.set(spec.name, declareOptions.onLost);
    },

    async publish(to: Destination, body: unknown, publishOptions: PublishOptions = {}) {
      requireStarted();
      const envelope = encodeEnvelope(body, publishOptions, maxMessageBytes);
      const { exchange, routingKey } = checkDestination(to, plan.exchanges);
      await publisher.publish(exchange, routingKey, envelope, settings.publishConfirmTimeoutMs);
    },

    async consume<T>(queue: string, handler: Handler<T>, consumeOptions: ConsumeOptions) {
      requireStarted();
      checkPrefetch(consumeOptions.prefetch);
      // The body is whatever JSON arrived; T is the caller's claim about it.
      const anyHandler = handler as Handler<unknown>;
      const consumer = new RabbitMqConsumer(
        queue,
        anyHandler,
        consumeOptions.prefetch,
        context,
        consumeOptions.onOutcomeUncertain && {
          report: consumeOptions.onOutcomeUncertain,
          windowMs: consumeOptions.uncertainWindowMs ?? DEFAULT_UNCERTAIN_WINDOW_MS,
        },
      );
      consumers.add(consumer);
      try {
        await consumer.attach(await session.wait(settings.operationTimeoutMs));
      } catch (error) {
        consumers.delete(consumer);
        await consumer.cancel();
        throw asBusError(error, queue);
      }
      return {
        cancel: async () => {
          consumers.delete(consumer);
          await consumer.cancel();
        },
      };
    },

    isHealthy() {
      const model = session.current();
      if (state !== 'started' || !model || !publisher.isOpen()) return false;
      return [...consumers].every((consumer) => consumer.isAttachedTo(model));
    },

    async close() {
      if (state === 'closed') return;
      state = 'closed';
      await Promise.all([...consumers].map((consumer) => consumer.cancel()));
      consumers.clear();
      await publisher.close();
      session.close();
      await connection?.close().catch(() => {});
      connection = null;
    },
  };
}

async function openConnection(
  url: string,
  reconnect: { initialDelayMs: number; maxDelayMs: number },
  setup: (model: ChannelModel) => Promise<void>,
  logger: BusLogger,
): Promise<RecoveringChannelModel> {
  const connection = await connect(url, {
    // amqplib leaves Nagle's algorithm on: a small publish then waits for the peer's delayed ACK
    // (~40 ms on Linux), which showed as +45 ms on every streamed first byte and every job.
    noDelay: true,
    // Dead peers (a broker gone without a FIN) are noticed by the OS, not only by heartbeats.
    keepAlive: true,
    recovery: {
      initialDelay: reconnect.initialDelayMs,
      maxDelay: reconnect.maxDelayMs,
      factor: 2,
      jitter: 0.2,
      // Once connected, never give up: services stay up and report unhealthy instead.
      maxRetries: Infinity,
      waitForConnect: false,
      setup,
    },
  });
  // Connection failures repeat while the broker is away: their message is enough.
  const warn = (msg: string) => (err: Error) => logger.warn({ err: err.message }, msg);
  connection.on('disconnect', warn('RabbitMQ connection lost; reconnecting'));
  connection.on('connect-failed', warn('RabbitMQ connect attempt failed'));
  connection.on('error', warn('RabbitMQ connection error'));
  connection.on('reconnect-failed', warn('RabbitMQ reconnection abandoned'));
  connection.on('handler-error', warn('error in a RabbitMQ event listener'));
  connection.on('blocked', (reason: string) =>
    logger.warn({ reason }, 'RabbitMQ blocked publishing'),
  );
  connection.on('unblocked', () => logger.info({}, 'RabbitMQ unblocked publishing'));
  return connection;
}

/**
 * amqplib reports a missing queue as a channel closed with 404, a mismatch with 406, an
 * operation the user has no permission for with 403.
 */
function asBusError(error: unknown, queue: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 404) return new BusError('not-found', `no queue '${queue}'`, { cause: error });
  if (code === 406) return new BusError('conflict', `queue '${queue}' refused`, { cause: error });
  if (code === 403) {
    return new BusError('forbidden', `queue '${queue}': access refused`, { cause: error });
  }
  return error;
}

function uniqueBindings<B extends { exchange: string; routingKey: string }>(bindings: B[]): B[] {
  const seen = new Set<string>();
  return bindings.filter((b) => {
    const key = `${b.exchange}\u0000${b.routingKey}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The gateway's bus as a service builds it: under the configured prefix, dead letters kept as
 * configured. With `service`, only what that service declares (`serviceTopology`: what its
 * broker user may configure, broker-access.ts); without, the whole topology (tests, tools).
 */
export function createGatewayBus(
  config: {
    AMQP_URL: string;
    AMQP_PREFIX: string;
    DEAD_LETTER_TTL_MS?: number;
    DEAD_LETTER_MAX_LENGTH?: number;
  },
  logger: BusLogger,
  options: Pick<RabbitMqBusOptions, 'publishConfirmTimeoutMs'> & { service?: BrokerService } = {},
): MessageBus {
  const { service, ...busOptions } = options;
  const deadLetters = {
    messageTtlMs: config.DEAD_LETTER_TTL_MS ?? DEFAULT_DEAD_LETTER_RETENTION.messageTtlMs,
    maxLength: config.DEAD_LETTER_MAX_LENGTH ?? DEFAULT_DEAD_LETTER_RETENTION.maxLength,
  };
  const topology = service
    ? serviceTopology(service, config.AMQP_PREFIX, deadLetters)
    : gatewayTopology(config.AMQP_PREFIX, deadLetters);
  return traceBus(createRabbitMqBus({ url: config.AMQP_URL, topology, logger, ...busOptions }));
}
