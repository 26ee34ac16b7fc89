import { BusError } from './bus.js';
import { QUEUE_NAME_EXCHANGE, deadQueueName, retryQueueName } from './topology.js';
import type { Binding, QueueSpec, Topology } from './topology.js';

/**
 * A topology expanded into every exchange and queue the broker must hold, with the rules
 * both buses implement. `queueArguments()` is the only place RabbitMQ arguments are spelled.
 */
export interface QueueDeclaration {
  name: string;
  kind: 'quorum' | 'transient';
  /** Returns (requeues, lost consumers) tolerated; one more dead-letters the message. */
  deliveryLimit?: number;
  messageTtlMs?: number;
  deadLetter?: Binding;
  maxLength: number;
  overflow: 'reject-publish' | 'drop-head';
  bindings: Binding[];
  /** Where the `retry` outcome parks a message, and how often. */
  retry?: { queue: string; maxRetries: number };
  /** Transient queue that survives its connection (durable, not exclusive), see QueueSpec. */
  outlivesConnection?: boolean;
  /** Deleted this long after its last consumer left (`x-expires`). */
  expiresMs?: number;
}

export interface TopologyPlan {
  exchanges: string[];
  queues: QueueDeclaration[];
}

export const DEFAULT_MAX_DELIVERIES = 5;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_QUORUM_MAX_LENGTH = 100_000;
export const DEFAULT_TRANSIENT_MAX_LENGTH = 10_000;

const LIMITS = {
  maxDeliveries: [1, 100],
  retryDelayMs: [1, 24 * 60 * 60 * 1000],
  maxRetries: [0, 100],
  maxLength: [1, 10_000_000],
} as const;
const LASTING_LIMITS = {
  expiresMs: [1_000, 24 * 60 * 60 * 1000],
  messageTtlMs: [100, 60 * 60 * 1000],
} as const;
const DEAD_LETTER_LIMITS = {
  messageTtlMs: [1, 30 * 24 * 60 * 60 * 1000],
  maxLength: [1, 10_000_000],
} as const;
// AMQP names are at most 255 bytes; leave room for the `.retry` and `.dead` suffixes.
const MAX_NAME_BYTES = 240;
const NAME_PATTERN = /^[A-Za-z0-9._:-]+$/;

export function planTopology(topology: Topology): TopologyPlan {
  // The dead-letter exchange is declared where quorum queues need it (a service declaring only
  // transient queues, such as edge, neither declares nor may configure it).
  const hasQuorum = topology.queues.some((spec) => spec.kind === 'quorum');
  const exchanges = [
    ...topology.exchanges.map((e) => e.name),
    ...(hasQuorum ? [topology.deadLetterExchange] : []),
  ];
  exchanges.forEach((name) => checkName(name, 'exchange'));
  checkUnique(exchanges, 'exchange');
  checkDeadLetters(topology.deadLetters);
  const queues = topology.queues.flatMap((spec) => planQueue(spec, topology, exchanges));
  checkUnique(
    queues.map((q) => q.name),
    'queue',
  );
  return { exchanges, queues };
}

/** One spec becomes its queue plus, for quorum queues, `<name>.dead` and `<name>.retry`. */
export function planQueue(
  spec: QueueSpec,
  topology: Pick<Topology, 'deadLetterExchange' | 'deadLetters'>,
  knownExchanges: readonly string[],
): QueueDeclaration[] {
  const { deadLetterExchange, deadLetters } = topology;
  checkSpec(spec, knownExchanges);
  const bindings = (spec.bindings ?? []).map((b) => ({ ...b }));
  if (spec.kind === 'transient') {
    const maxLength = spec.maxLength ?? DEFAULT_TRANSIENT_MAX_LENGTH;
    const queue: QueueDeclaration = {
      name: spec.name,
      kind: 'transient',
      maxLength,
      overflow: 'reject-publish',
      bindings,
    };
    const lasting = spec.outlivesConnection;
    if (lasting) {
      checkRange(`queue ${spec.name}`, 'expiresMs', lasting.expiresMs, LASTING_LIMITS.expiresMs);
      checkRange(
        `queue ${spec.name}`,
        'messageTtlMs',
        lasting.messageTtlMs,
        LASTING_LIMITS.messageTtlMs,
      );
      checkName(lasting.deadLetterQueue, 'queue');
      Object.assign(queue, {
        outlivesConnection: true,
        expiresMs: lasting.expiresMs,
        messageTtlMs: lasting.messageTtlMs,
        deadLetter: { exchange: '', routingKey: lasting.deadLetterQueue },
      });
    }
    return [queue];
  }
  if (!knownExchanges.includes(deadLetterExchange)) {
    invalid(`queue ${spec.name}: the topology declares no dead-letter exchange for quorum queues`);
  }
  const dead = deadQueueName(spec.name);
  const maxLength = spec.maxLength ?? DEFAULT_QUORUM_MAX_LENGTH;
  const main: QueueDeclaration = {
    name: spec.name,
    kind: 'quorum',
    deliveryLimit: (spec.maxDeliveries ?? DEFAULT_MAX_DELIVERIES) - 1,
    deadLetter: { exchange: deadLetterExchange, routingKey: spec.name },
    maxLength,
    overflow: 'reject-publish',
    bindings,
  };
  const deadQueue: QueueDeclaration = {
    name: dead,
    kind: 'quorum',
    // Expired dead letters are dropped (no dead-letter target of their own).
    messageTtlMs: deadLetters.messageTtlMs,
    maxLength: deadLetters.maxLength,
    overflow: 'drop-head',
    bindings: [{ exchange: deadLetterExchange, routingKey: spec.name }],
  };
  if (spec.retryDelayMs === undefined) return [main, deadQueue];
  const retry = retryQueueName(spec.name);
  main.retry = { queue: retry, maxRetries: spec.maxRetries ?? DEFAULT_MAX_RETRIES };
  const retryQueue: QueueDeclaration = {
    name: retry,
    kind: 'quorum',
    messageTtlMs: spec.retryDelayMs,
    // Expired messages go back to the main queue through the default exchange.
    deadLetter: { exchange: '', routingKey: spec.name },
    maxLength,
    overflow: 'reject-publish',
    bindings: [],
  };
  return [main, deadQueue, retryQueue];
}

/**
 * The `x-` arguments RabbitMQ 3.10 needs for a declaration (checked against a real node). A dead
 * letter addressed to a queue (exchange '') goes through `QUEUE_NAME_EXCHANGE`, where the queue
 * is bound under its name: RabbitMQ checks `write` on the dead-letter exchange when a queue is
 * declared, and `write` on the default exchange would let the declarer publish to any queue.
 */
export function queueArguments(queue: QueueDeclaration): Record<string, string | number> {
  const args: Record<string, string | number> = {
    'x-max-length': queue.maxLength,
    'x-overflow': queue.overflow,
  };
  if (queue.kind === 'quorum') args['x-queue-type'] = 'quorum';
  if (queue.deliveryLimit !== undefined) args['x-delivery-limit'] = queue.deliveryLimit;
  if (queue.messageTtlMs !== undefined) args['x-message-ttl'] = queue.messageTtlMs;
  if (queue.expiresMs !== undefined) args['x-expires'] = queue.expiresMs;
  if (queue.deadLetter) {
    args['x-dead-letter-exchange'] = queue.deadLetter.exchange || QUEUE_NAME_EXCHANGE;
    args['x-dead-letter-routing-key'] = queue.deadLetter.routingKey;
    // At-least-once dead-lettering (quorum only) needs reject-publish, which both set.
    if (queue.kind === 'quorum') args['x-dead-letter-strategy'] = 'at-least-once';
  }
  return args;
}

/**
 * Transient queues die with their connection (unless they outlive it); everything else
 * survives broker restarts.
 */
export function queueOptions(queue: QueueDeclaration): {
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
  arguments: Record<string, string | number>;
} {
  const transient = queue.kind === 'transient' && !queue.outlivesConnection;
  return {
    durable: !transient,
    exclusive: transient,
    autoDelete: transient,
    arguments: queueArguments(queue),
  };
}

/** Same queue as far as the broker is concerned; bindings are additive, so they don't count. */
export function sameQueue(a: QueueDeclaration, b: QueueDeclaration): boolean {
  const shape = (q: QueueDeclaration) => JSON.stringify({ ...q, bindings: [] });
  return shape(a) === shape(b);
}

function checkSpec(spec: QueueSpec, knownExchanges: readonly string[]): void {
  checkName(spec.name, 'queue');
  if (spec.kind !== 'quorum' && spec.kind !== 'transient') {
    invalid(`queue ${spec.name}: kind must be 'quorum' or 'transient'`);
  }
  for (const key of Object.keys(LIMITS) as (keyof typeof LIMITS)[]) {
    const value = spec[key];
    if (value === undefined) continue;
    checkRange(`queue ${spec.name}`, key, value, LIMITS[key]);
    if (spec.kind === 'transient' && key !== 'maxLength') {
      invalid(`queue ${spec.name}: ${key} applies to quorum queues only`);
    }
  }
  for (const binding of spec.bindings ?? []) checkBinding(spec.name, binding, knownExchanges);
}

function checkDeadLetters(retention: Topology['deadLetters']): void {
  for (const key of Object.keys(DEAD_LETTER_LIMITS) as (keyof typeof DEAD_LETTER_LIMITS)[]) {
    checkRange('dead letters', key, retention[key], DEAD_LETTER_LIMITS[key]);
  }
}

function checkBinding(queue: string, binding: Binding, knownExchanges: readonly string[]): void {
  if (!knownExchanges.includes(binding.exchange)) {
    invalid(`queue ${queue}: binding to undeclared exchange '${binding.exchange}'`);
  }
  if (Buffer.byteLength(binding.routingKey) > 255) {
    invalid(`queue ${queue}: routing key over 255 bytes`);
  }
}

function checkName(name: string, what: string): void {
  const ok =
    typeof name === 'string' &&
    NAME_PATTERN.test(name) &&
    Buffer.byteLength(name) <= MAX_NAME_BYTES &&
    !name.startsWith('amq.');
  if (!ok) invalid(`invalid ${what} name '${String(name)}'`);
}

function checkUnique(names: string[], what: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) invalid(`${what} '${name}' declared twice`);
    seen.add(name);
  }
}

function invalid(message: string): never {
  throw new BusError('invalid-argument', message);
}

/** `value` an integer in `min..max`, else refused as `<label>: <key> must be an integer in …`. */
function checkRange(
  label: string,
  key: string,
  value: number,
  [min, max]: readonly [number, number],
): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    invalid(`${label}: ${key} must be an integer in ${min}..${max}`);
  }
}
