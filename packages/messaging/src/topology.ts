/**
 * The one place the gateway's RabbitMQ topology is declared. Services take names from
 * `gatewayNames()` (or the unprefixed constants) and never spell them; the buses turn a
 * `Topology` into broker declarations through `planTopology()` (topology-plan.ts).
 */

export interface Binding {
  exchange: string;
  routingKey: string;
}

export interface QueueSpec {
  name: string;
  /**
   * `quorum`: durable, replicated, with a delivery limit and a `<name>.dead` queue.
   * `transient`: classic, non-durable, exclusive, auto-delete — a per-process reply queue. It
   * vanishes with the connection: after a reconnect the bus declares it again, empty.
   */
  kind: 'quorum' | 'transient';
  /** Quorum only: deliveries (1 + requeues) before the message goes to `<name>.dead`. */
  maxDeliveries?: number;
  /** Quorum only: with it, `retry` parks the message in `<name>.retry` for this long. */
  retryDelayMs?: number;
  /** Quorum only: `retry` outcomes allowed before the message goes to `<name>.dead`. */
  maxRetries?: number;
  /** Messages held before publishes are rejected (quorum queues may take one more). */
  maxLength?: number;
  bindings?: Binding[];
  /**
   * Transient only: the queue outlives its connection and a broker restart (durable, not
   * exclusive), so replies published during a blip wait for the process to reconnect. It is
   * deleted `expiresMs` after its last consumer left; a message not consumed within
   * `messageTtlMs` (its process is gone) is dead-lettered to the queue `deadLetterQueue`.
   */
  outlivesConnection?: { expiresMs: number; messageTtlMs: number; deadLetterQueue: string };
}

export interface Topology {
  exchanges: { name: string; type: 'direct' }[];
  queues: QueueSpec[];
  /** Direct exchange every quorum queue dead-letters to; routes to `<queue>.dead`. */
  deadLetterExchange: string;
  /** How long and how many dead letters every `<queue>.dead` keeps. */
  deadLetters: DeadLetterRetention;
}

/**
 * Dead letters are kept for inspection, not forever: a dead-lettered job still carries its
 * prompt. Past `messageTtlMs` a dead letter is dropped, and beyond `maxLength` the oldest go.
 */
export interface DeadLetterRetention {
  messageTtlMs: number;
  maxLength: number;
}

/** 72 h covers a long weekend before someone inspects a dead letter; 10,000 bounds disk. */
export const DEFAULT_DEAD_LETTER_RETENTION: DeadLetterRetention = {
  messageTtlMs: 72 * 60 * 60 * 1000,
  maxLength: 10_000,
};

/**
 * `control` carries broadcasts: every worker binds its own transient queue with the `cancel`
 * routing key, so a direct exchange delivers each cancellation to all of them.
 */
export const EXCHANGES = {
  jobs: 'gateway.jobs',
  events: 'gateway.events',
  control: 'gateway.control',
} as const;

export const DEAD_LETTER_EXCHANGE = 'gateway.dlx';

export const QUEUES = {
  inferenceJobs: 'inference.jobs',
  inferenceJobsPriority: 'inference.jobs.priority',
  webhookCompletions: 'webhook.completions',
  billingSettlements: 'billing.settlements',
  /** Replies edge's reply queue dead-lettered unread (its edge is gone); `inference.reply` only. */
  unreadReplies: 'billing.unread-replies',
} as const;

/** Routing keys are not prefixed: exchanges already are. */
export const ROUTING_KEYS = {
  defaultJob: 'default',
  priorityJob: 'priority',
  inferenceCompleted: 'inference.completed',
  /** Account alerts: billing's outbox → the dispatcher, on the events exchange. */
  accountAlert: 'account.alert',
  /** A background response ended: billing's outbox → the dispatcher, as alerts. */
  responseEnded: 'response.ended',
  cancelJob: 'cancel',
} as const;

export const deadQueueName = (queue: string): string => `${queue}.dead`;
export const retryQueueName = (queue: string): string => `${queue}.retry`;

/** Edge's reply queue, one per process (`id`: a random UUID); see broker-access.ts. */
export const replyQueueName = (prefix: string, id: string): string => `${prefix}edge.replies.${id}`;
/** A worker's queue of the cancellation broadcast, one per process (`id`: a random UUID). */
export const cancelQueueName = (prefix: string, id: string): string =>
  `${prefix}${QUEUES.inferenceJobs}.cancel.${id}`;

/**
 * Where the RabbitMQ bus publishes a message addressed to a queue (`{ queue }`, a `retry` copy,
 * and the dead letters of retry and reply queues): RabbitMQ's predeclared topic exchange, every
 * queue the bus declares bound to it under its own name. Not the default exchange, whose `write`
 * permission (on `amq.default`) would open every queue of the vhost: on `amq.topic`, topic
 * permissions name the queues a user may publish to, and no client can delete or redeclare it.
 */
export const QUEUE_NAME_EXCHANGE = 'amq.topic';

type Prefixed<T> = { [K in keyof T]: string };

function prefixAll<T extends Record<string, string>>(names: T, prefix: string): Prefixed<T> {
  const entries = Object.entries(names).map(([key, name]) => [key, `${prefix}${name}`]);
  return Object.fromEntries(entries) as Prefixed<T>;
}

export interface GatewayNames {
  exchanges: Prefixed<typeof EXCHANGES>;
  queues: Prefixed<typeof QUEUES>;
  deadLetterExchange: string;
  routingKeys: typeof ROUTING_KEYS;
}

/** The gateway's names under a prefix ('' in production, a unique one per test). */
export function gatewayNames(prefix = ''): GatewayNames {
  return {
    exchanges: prefixAll(EXCHANGES, prefix),
    queues: prefixAll(QUEUES, prefix),
    deadLetterExchange: `${prefix}${DEAD_LETTER_EXCHANGE}`,
    routingKeys: ROUTING_KEYS,
  };
}

// Inference jobs are expensive to redo: few immediate redeliveries, a short pause between
// retries. Webhook receivers go down for minutes, so completions retry longer and more often.
const JOB_QUEUE_LIMITS = { maxDeliveries: 5, retryDelayMs: 10_000, maxRetries: 3 } as const;
const WEBHOOK_QUEUE_LIMITS = { maxDeliveries: 5, retryDelayMs: 30_000, maxRetries: 10 } as const;
// Settlements queued while billing was unreachable (the worker publishes straight to the queue).
// Billing retries a settlement in place while its database is down, so deliveries are spent only
// by billing restarts; the dead letter is a bug signal, never the normal end.
const SETTLEMENT_QUEUE_LIMITS = { maxDeliveries: 50, maxLength: 1_000_000 } as const;

export function gatewayTopology(
  prefix = '',
  deadLetters: DeadLetterRetention = DEFAULT_DEAD_LETTER_RETENTION,
): Topology {
  const { exchanges, queues, deadLetterExchange } = gatewayNames(prefix);
  return {
    deadLetters,
    exchanges: [
      { name: exchanges.jobs, type: 'direct' },
      { name: exchanges.events, type: 'direct' },
      { name: exchanges.control, type: 'direct' },
    ],
    deadLetterExchange,
    queues: [
      {
        name: queues.inferenceJobs,
        kind: 'quorum',
        ...JOB_QUEUE_LIMITS,
        bindings: [{ exchange: exchanges.jobs, routingKey: ROUTING_KEYS.defaultJob }],
      },
      {
        name: queues.inferenceJobsPriority,
        kind: 'quorum',
        ...JOB_QUEUE_LIMITS,
        bindings: [{ exchange: exchanges.jobs, routingKey: ROUTING_KEYS.priorityJob }],
      },
      {
        name: queues.webhookCompletions,
        kind: 'quorum',
        ...WEBHOOK_QUEUE_LIMITS,
        // Job results, account alerts and ended responses: all become signed webhooks, on one
        // consumer.
        bindings: [
          { exchange: exchanges.events, routingKey: ROUTING_KEYS.inferenceCompleted },
          { exchange: exchanges.events, routingKey: ROUTING_KEYS.accountAlert },
          { exchange: exchanges.events, routingKey: ROUTING_KEYS.responseEnded },
        ],
      },
      { name: queues.billingSettlements, kind: 'quorum', ...SETTLEMENT_QUEUE_LIMITS },
      // Billing refunds an unread answer the same way: retried in place, never dropped.
      { name: queues.unreadReplies, kind: 'quorum', ...SETTLEMENT_QUEUE_LIMITS },
    ],
  };
}
