import { randomUUID } from 'node:crypto';
import { EnvelopeError, makeEnvelope, parseEnvelope } from '@gateway/contracts';
import type {
  InferenceCancelPayload,
  InferenceJobPayload,
  InferenceReplyPayload,
} from '@gateway/contracts';
import { gatewayNames, replyQueueName } from '@gateway/messaging';
import type { Consumer, Delivery, GatewayNames, MessageBus, Outcome } from '@gateway/messaging';
import type { Logger } from '@gateway/observability';

/* Edge's side of the job queues: jobs and cancellations out, replies in. */

export type ReplyListener = (reply: InferenceReplyPayload) => void;

export interface ReplyRouterOptions {
  bus: MessageBus;
  /** The AMQP_PREFIX; the queue is `<prefix>edge.replies.<uuid>`. */
  prefix: string;
  /** Replies handled at once; each is a quick hand-off to a waiting request. */
  prefetch?: number;
  logger: Logger;
}

const DEFAULT_PREFETCH = 256;
/** A reply not read in this time belongs to an edge that is gone (a reconnect takes seconds). */
export const REPLY_UNREAD_TTL_MS = 30_000;
/** The queue of an edge that is gone is deleted this long after it stopped reading. */
const REPLY_QUEUE_EXPIRES_MS = 10 * 60_000;

/**
 * ONE reply queue per edge process: every synchronous job names it as `replyTo`, and replies
 * are handed to the request waiting for that job id. A reply nobody waits for any more (the
 * client left, edge timed out) is dropped: the money was already finalised by the worker.
 * The queue outlives edge's connection and a broker restart (issue 15, defect 4): replies sent
 * meanwhile wait until edge has reconnected, so its waiting requests still get their answers.
 * A reply left unread for `REPLY_UNREAD_TTL_MS` (this edge died) is dead-lettered to
 * `billing.unread-replies`, where billing refunds a final one: an answer nobody received is not
 * charged.
 */
export class ReplyRouter {
  readonly queue: string;
  readonly #options: ReplyRouterOptions;
  readonly #listeners = new Map<string, ReplyListener>();
  #consumer: Consumer | null = null;

  constructor(options: ReplyRouterOptions) {
    this.#options = options;
    this.queue = replyQueueName(options.prefix, randomUUID());
  }

  get ready(): boolean {
    return this.#consumer !== null;
  }

  /** Jobs waiting for replies (for tests and metrics). */
  get waiting(): number {
    return this.#listeners.size;
  }

  async start(): Promise<void> {
    const { bus } = this.#options;
    await bus.declareQueue({
      name: this.queue,
      kind: 'transient',
      outlivesConnection: {
        expiresMs: REPLY_QUEUE_EXPIRES_MS,
        messageTtlMs: REPLY_UNREAD_TTL_MS,
        deadLetterQueue: gatewayNames(this.#options.prefix).queues.unreadReplies,
      },
    });
    this.#consumer = await bus.consume(this.queue, (delivery) => this.#route(delivery), {
      prefetch: this.#options.prefetch ?? DEFAULT_PREFETCH,
    });
  }

  async stop(): Promise<void> {
    const consumer = this.#consumer;
    this.#consumer = null;
    await consumer?.cancel();
  }

  /** Routes the replies of `jobId` to `listener` until the returned function is called. */
  listen(jobId: string, listener: ReplyListener): () => void {
    this.#listeners.set(jobId, listener);
    return () => {
      if (this.#listeners.get(jobId) === listener) this.#listeners.delete(jobId);
    };
  }

  async #route(delivery: Delivery): Promise<Outcome> {
    let reply: InferenceReplyPayload;
    try {
      reply = parseEnvelope('inference.reply', delivery.body).payload;
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
      this.#options.logger.warn({ reason: error.reason, err: error.message }, 'bad reply dropped');
      return 'dead-letter';
    }
    const listener = this.#listeners.get(reply.jobId);
    if (listener) listener(reply);
    else this.#options.logger.debug({ jobId: reply.jobId, seq: reply.seq }, 'late reply dropped');
    return 'ack';
  }
}

/**
 * Publishing side of the job protocol (docs/job-protocol.md): jobs to `gateway.jobs` with routing
 * key `priority` or `default` (so a backlog of default jobs never delays a priority one),
 * `correlationId` = job id; cancellations to `gateway.control` with key `cancel`, which every
 * worker receives. Both are confirmed by the broker before the promise resolves.
 */
export class JobPublisher {
  constructor(
    private readonly bus: MessageBus,
    private readonly names: GatewayNames,
  ) {}

  async publishJob(job: InferenceJobPayload): Promise<void> {
    const envelope = makeEnvelope('inference.job', job);
    const routingKey =
      job.serviceTier === 'priority'
        ? this.names.routingKeys.priorityJob
        : this.names.routingKeys.defaultJob;
    await this.bus.publish({ exchange: this.names.exchanges.jobs, routingKey }, envelope, {
      messageId: envelope.id,
      correlationId: job.jobId,
      ...(job.replyTo === undefined ? {} : { replyTo: job.replyTo }),
    });
  }

  async publishCancel(cancel: InferenceCancelPayload): Promise<void> {
    const envelope = makeEnvelope('inference.cancel', cancel);
    await this.bus.publish(
      { exchange: this.names.exchanges.control, routingKey: this.names.routingKeys.cancelJob },
      envelope,
      { messageId: envelope.id, correlationId: cancel.jobId },
    );
  }
}
