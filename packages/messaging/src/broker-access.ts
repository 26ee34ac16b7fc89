import { createHash, randomBytes } from 'node:crypto';
import {
  DEFAULT_DEAD_LETTER_RETENTION,
  EXCHANGES,
  QUEUES,
  QUEUE_NAME_EXCHANGE,
  cancelQueueName,
  gatewayTopology,
  replyQueueName,
} from './topology.js';
import type { DeadLetterRetention, Topology } from './topology.js';
import { planTopology } from './topology-plan.js';

/*
 * Least privilege on the broker (docs/security.md): each service connects as its own RabbitMQ
 * user, declares only what it uses, and may touch nothing else. This file is the single source
 * of both: `serviceTopology()` is what a service's bus declares, `brokerPermissions()` the
 * configure / write / read regular expressions (and topic permissions on `QUEUE_NAME_EXCHANGE`)
 * its user gets, derived from the same role table below; `brokerDefinitions()` turns them into
 * a RabbitMQ definitions document (tests import it with rabbitmqctl, deployments post it to the
 * management API: broker-users-cli.ts).
 *
 * What RabbitMQ checks (measured on 3.10.8):
 * - declaring (or deleting) an exchange or queue: `configure` on it;
 * - a queue with a dead-letter exchange: also `read` on the queue and `write` on that exchange;
 * - binding a queue: `write` on the queue, `read` on the exchange (and, on a topic exchange, the
 *   topic `read` pattern on the binding key);
 * - publishing: `write` on the exchange (the default exchange counts as `amq.default`, which
 *   would open every queue: so the bus never uses it) and, on a topic exchange, the topic
 *   `write` pattern on the routing key;
 * - consuming or getting: `read` on the queue; a passive declaration: nothing.
 */

export const BROKER_SERVICES = ['edge', 'inference-worker', 'billing', 'dispatcher'] as const;
export type BrokerService = (typeof BROKER_SERVICES)[number];

type ExchangeKey = keyof typeof EXCHANGES;
type QueueKey = keyof typeof QUEUES;

/** A queue a process declares for itself, named `<prefix><stem><uuid>` (reply, cancel queues). */
interface ProcessQueue {
  stem: string;
  /** Exchanges it is bound to (besides `QUEUE_NAME_EXCHANGE`, under its own name). */
  bindsTo: ExchangeKey[];
  /** Its dead letters go to a queue by name (through `QUEUE_NAME_EXCHANGE`). */
  deadLettersByName: boolean;
}

interface ServiceRole {
  /** Exchanges it publishes to: it declares them, so they exist before its first publish. */
  publishes: ExchangeKey[];
  /** Queues of the topology it consumes: it declares them, their `.dead` and `.retry` queues. */
  consumes: QueueKey[];
  /** Its per-process queues (declared with `declareQueue`). */
  processQueues: ProcessQueue[];
  /** Queues it sends to by name (through `QUEUE_NAME_EXCHANGE`). */
  sendsTo: ({ queue: QueueKey } | { stem: string })[];
}

const REPLY_STEM = replyQueueName('', '');
const CANCEL_STEM = cancelQueueName('', '');

/** Who does what, from the code: each service's role on the broker. */
const ROLES: Record<BrokerService, ServiceRole> = {
  // Publishes jobs and cancellations; reads replies from its own queue, whose unread replies are
  // dead-lettered to billing.unread-replies (services/edge/src/jobs/job-replies.ts).
  edge: {
    publishes: ['jobs', 'control'],
    consumes: [],
    processQueues: [{ stem: REPLY_STEM, bindsTo: [], deadLettersByName: true }],
    sendsTo: [],
  },
  // Consumes both job queues and the cancellation broadcast; replies to edge's reply queues,
  // publishes completion events, and queues settlements while billing does not answer.
  'inference-worker': {
    publishes: ['events'],
    consumes: ['inferenceJobs', 'inferenceJobsPriority'],
    processQueues: [{ stem: CANCEL_STEM, bindsTo: ['control'], deadLettersByName: false }],
    sendsTo: [{ stem: REPLY_STEM }, { queue: 'billingSettlements' }],
  },
  // Applies queued settlements and refunds unread answers; publishes the completion events it
  // held back, and account alerts.
  billing: {
    publishes: ['events'],
    consumes: ['billingSettlements', 'unreadReplies'],
    processQueues: [],
    sendsTo: [],
  },
  // Consumes completion events and account alerts (webhooks).
  dispatcher: {
    publishes: [],
    consumes: ['webhookCompletions'],
    processQueues: [],
    sendsTo: [],
  },
};

/**
 * What `service` declares: the exchanges it publishes to or binds its queues to, and the queues
 * it consumes (with their dead-letter and retry queues); the dead-letter exchange only if it has
 * quorum queues. Every other queue is declared by its consumer: a publisher never declares (it
 * could not: a queue with a dead-letter exchange needs `read` on it), so until the consumer has
 * started once a publish there is `unroutable`.
 */
export function serviceTopology(
  service: BrokerService,
  prefix = '',
  deadLetters: DeadLetterRetention = DEFAULT_DEAD_LETTER_RETENTION,
): Topology {
  const role = ROLES[service];
  const full = gatewayTopology(prefix, deadLetters);
  const consumed = new Set(role.consumes.map((key) => `${prefix}${QUEUES[key]}`));
  const queues = full.queues.filter((spec) => consumed.has(spec.name));
  const used = new Set<string>([
    ...role.publishes.map((key) => `${prefix}${EXCHANGES[key]}`),
    ...queues.flatMap((spec) => (spec.bindings ?? []).map((b) => b.exchange)),
    ...role.processQueues.flatMap((q) => q.bindsTo.map((key) => `${prefix}${EXCHANGES[key]}`)),
  ]);
  return { ...full, exchanges: full.exchanges.filter((e) => used.has(e.name)), queues };
}

export interface BrokerPermission {
  configure: string;
  write: string;
  read: string;
}

export interface TopicPermission {
  exchange: string;
  write: string;
  read: string;
}

export interface ServiceBrokerAccess {
  /** `set_permissions` on the vhost: regular expressions over exchange and queue names. */
  permission: BrokerPermission;
  /** `set_topic_permissions`: routing keys it may publish with, and bind its queues with. */
  topic: TopicPermission;
}

/** The names a pattern stands for: `prefix` taken literally, or `prefixPattern` as a regex. */
export type PrefixOption = { prefix?: string } | { prefixPattern: string };

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
/** `^$` matches only the empty name, which names nothing (RabbitMQ's own "no access"). */
const NOTHING = '^$';
const anyOf = (alternatives: Iterable<string>): string => {
  const unique = [...new Set(alternatives)];
  return unique.length === 0 ? NOTHING : `^(?:${unique.join('|')})$`;
};

/**
 * Each service's permissions on the vhost, for names under `prefix` ('' in production) or, for
 * a test broker shared by many prefixes, under any prefix `prefixPattern` matches.
 */
export function brokerPermissions(
  options: PrefixOption = {},
): Record<BrokerService, ServiceBrokerAccess> {
  const prefixPattern =
    'prefixPattern' in options ? `(?:${options.prefixPattern})` : escape(options.prefix ?? '');
  const entries = BROKER_SERVICES.map((service) => [
    service,
    serviceAccess(service, prefixPattern),
  ]);
  return Object.fromEntries(entries) as Record<BrokerService, ServiceBrokerAccess>;
}

function serviceAccess(service: BrokerService, prefixPattern: string): ServiceBrokerAccess {
  const role = ROLES[service];
  // Plan the service's topology without a prefix, then put the prefix pattern in front.
  const plan = planTopology(serviceTopology(service, ''));
  const named = (name: string) => `${prefixPattern}${escape(name)}`;
  const processQueue = (stem: string) => `${prefixPattern}${escape(stem)}${UUID}`;
  const byName = escape(QUEUE_NAME_EXCHANGE);

  const ownQueues = [
    ...plan.queues.map((q) => named(q.name)),
    ...role.processQueues.map((q) => processQueue(q.stem)),
  ];
  const deadLetterExchanges = [
    ...plan.queues.flatMap((q) => (q.deadLetter ? [q.deadLetter.exchange] : [])),
    ...role.processQueues.flatMap((q) => (q.deadLettersByName ? [''] : [])),
  ].map((exchange) => (exchange === '' ? byName : named(exchange)));
  const boundFrom = [
    ...plan.queues.flatMap((q) => q.bindings.map((b) => named(b.exchange))),
    ...role.processQueues.flatMap((q) => q.bindsTo.map((key) => named(EXCHANGES[key]))),
  ];
  // Retry copies go to `<queue>.retry` by name; so do the service's own sends.
  const sends = [
    ...plan.queues.flatMap((q) => (q.retry ? [named(q.retry.queue)] : [])),
    ...role.sendsTo.map((to) => ('queue' in to ? named(QUEUES[to.queue]) : processQueue(to.stem))),
  ];
  const publishes = role.publishes.map((key) => named(EXCHANGES[key]));

  return {
    permission: {
      configure: anyOf([...plan.exchanges.map(named), ...ownQueues]),
      write: anyOf([
        ...publishes,
        ...deadLetterExchanges,
        ...(sends.length > 0 ? [byName] : []),
        ...ownQueues,
      ]),
      read: anyOf([...boundFrom, byName, ...ownQueues]),
    },
    topic: { exchange: QUEUE_NAME_EXCHANGE, write: anyOf(sends), read: anyOf(ownQueues) },
  };
}

export interface BrokerUser {
  service: BrokerService;
  name: string;
  password: string;
}

/** The parts of a RabbitMQ definitions document (`rabbitmqctl import_definitions`) used here. */
export interface BrokerDefinitions {
  users: { name: string; password_hash: string; hashing_algorithm: string; tags: string[] }[];
  permissions: ({ user: string; vhost: string } & BrokerPermission)[];
  topic_permissions: ({ user: string; vhost: string } & TopicPermission)[];
}

/**
 * The users of `users` with their passwords (hashed, as RabbitMQ stores them) and their
 * service's permissions on `vhost`. Importing it creates or updates them, leaving other users
 * alone; the vhost must exist.
 */
export function brokerDefinitions(
  options: { users: BrokerUser[]; vhost?: string } & PrefixOption,
): BrokerDefinitions {
  const vhost = options.vhost ?? '/';
  const access = brokerPermissions(options);
  const names = options.users.map((user) => user.name);
  if (new Set(names).size !== names.length) {
    throw new Error('each service needs a broker user of its own');
  }
  return {
    users: options.users.map((user) => ({
      name: user.name,
      password_hash: rabbitPasswordHash(user.password),
      hashing_algorithm: 'rabbit_password_hashing_sha256',
      tags: [],
    })),
    permissions: options.users.map((user) => ({
      user: user.name,
      vhost,
      ...access[user.service].permission,
    })),
    topic_permissions: options.users.map((user) => ({
      user: user.name,
      vhost,
      ...access[user.service].topic,
    })),
  };
}

/** RabbitMQ's `rabbit_password_hashing_sha256`: base64(salt ++ sha256(salt ++ password)). */
export function rabbitPasswordHash(password: string, salt: Buffer = randomBytes(4)): string {
  const digest = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
    .digest();
  return Buffer.concat([salt, digest]).toString('base64');
}
