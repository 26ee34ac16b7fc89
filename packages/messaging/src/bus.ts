import type { QueueSpec } from './topology.js';

/**
 * What a handler decides for one delivery. Both bus implementations give these the same meaning
 * (see README.md): `ack` removes it, `requeue` redelivers it now (up to the queue's
 * `maxDeliveries`), `retry` brings it back after the queue's `retryDelayMs` (up to `maxRetries`
 * times), `dead-letter` moves it to `<queue>.dead` now.
 */
export type Outcome = 'ack' | 'requeue' | 'retry' | 'dead-letter';

export interface Delivery<T = unknown> {
  body: T;
  messageId?: string;
  correlationId?: string;
  replyTo?: string;
  /** Application headers only: names starting with `x-` belong to the broker and the bus. */
  headers: Record<string, unknown>;
  /** 1 on the first delivery; each requeue, handler error or lost consumer adds 1. */
  deliveryCount: number;
  /** How many times the message went through the queue's delayed-retry queue. */
  retries: number;
  queue: string;
}

/** A handler that throws (or returns something that is not an Outcome) counts as `requeue`. */
export type Handler<T = unknown> = (delivery: Delivery<T>) => Promise<Outcome>;

export interface PublishOptions {
  messageId?: string;
  correlationId?: string;
  replyTo?: string;
  /** Names starting with `x-` are reserved (rejected). */
  headers?: Record<string, string | number | boolean>;
  /** Per-message TTL: undelivered after this long, it is dead-lettered (quorum) or dropped. */
  expirationMs?: number;
}

export type Destination = { exchange: string; routingKey: string } | { queue: string };

export interface ConsumeOptions {
  /** Most deliveries handed to this consumer's handlers at once, 1..MAX_PREFETCH. */
  prefetch: number;
  /**
   * A handler's outcome may not have reached the broker: its channel was gone when it was sent,
   * or closed within `uncertainWindowMs` after (the broker does not confirm acknowledgements,
   * and one sent just before a node stops or a connection is cut may never be processed). The
   * broker may then have the message back, to deliver again, dead-letter, or lose with its
   * queue. For consumers whose handling a redelivery cannot undo (an answer already sent).
   * Called at most once per delivery; a channel the consumer closes itself reports nothing.
   */
  onOutcomeUncertain?(delivery: Delivery, outcome: 'ack' | 'requeue' | 'dead-letter'): void;
  /** How long after it was sent an outcome counts as uncertain should its channel close. */
  uncertainWindowMs?: number;
}

export interface DeclareQueueOptions {
  onLost?(): void;
}

export interface Consumer {
  /** Stops new deliveries and waits (bounded) for in-flight handlers; the rest are redelivered. */
  cancel(): Promise<void>;
}

export interface MessageBus {
  /** Connects and declares the topology. */
  start(): Promise<void>;
  /**
   * Declares an extra queue (e.g. a transient reply queue); re-declared after a reconnect. A
   * transient queue that outlives its connection lives on one broker node: when that node is
   * down at a reconnect (a cluster), the queue is given up (no longer declared, its consumers
   * cancelled) and `onLost` is called, so that its owner can declare another.
   */
  declareQueue(spec: QueueSpec, options?: DeclareQueueOptions): Promise<void>;
  /** Publishes a persistent JSON message; resolves once the broker confirmed it (bounded wait). */
  publish(to: Destination, body: unknown, options?: PublishOptions): Promise<void>;
  /** Manual-ack consumer; survives reconnects. */
  consume<T>(queue: string, handler: Handler<T>, options: ConsumeOptions): Promise<Consumer>;
  /** Connected, and the publishing channel and every consumer's channel are open. */
  isHealthy(): boolean;
  /** Cancels consumers (waiting for in-flight handlers, bounded) and closes cleanly. */
  close(): Promise<void>;
}

/** The slice of a logger the bus needs; pino satisfies it. Never given message bodies. */
export interface BusLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How long cancel() and close() wait for in-flight handlers before giving their messages back. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

export const silentLogger: BusLogger = { info: () => {}, warn: () => {}, error: () => {} };

export type BusErrorCode =
  | 'invalid-argument' // caller error: bad options, unknown exchange, body too large...
  | 'unroutable' // no queue is bound for the destination
  | 'rejected' // the broker refused the message (e.g. queue full)
  | 'timeout' // not confirmed / not connected within the bound: whether it was queued is unknown
  | 'not-found' // consuming from a queue that does not exist
  | 'conflict' // a queue exists with different arguments
  | 'forbidden' // the broker refused this user the operation (ACCESS_REFUSED, 403)
  | 'closed'; // the bus is closed or not started

/** Errors both implementations throw, so callers can branch on `code` whatever the transport. */
export class BusError extends Error {
  override readonly name = 'BusError';

  constructor(
    readonly code: BusErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
