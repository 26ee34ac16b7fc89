/*
 * A job's replies at edge: the process's reply queue (`ReplyRouter`) hands each one to the job's
 * waiting request (`RunningJob`), in `seq` order (`ReplySequence`) within the reply timeout.
 */
import { randomUUID } from 'node:crypto';
import {
  EnvelopeError,
  GatewayError,
  gatewayErrorFromWire,
  parseEnvelope,
} from '@gateway/contracts';
import type { InferenceCancelPayload, InferenceReplyPayload } from '@gateway/contracts';
import { gatewayNames, replyQueueName } from '@gateway/messaging';
import type { Consumer, Delivery, MessageBus, Outcome } from '@gateway/messaging';
import type { Logger } from '@gateway/observability';
import type { ReadinessCheck } from '@gateway/runtime';
import type { HoldReleases } from './hold-release.js';

/** A job waiting for its replies (`RunningJob`). */
export interface ReplyListener {
  push(reply: InferenceReplyPayload): void;
  /**
   * Its replies were to come through a path that was lost (a queue with its broker node, a
   * worker's answer that broke off): stop waiting now. `how` ends the client's message.
   */
  replyPathLost(how?: string): void;
}

export interface ReplyRouterOptions {
  bus: MessageBus;
  /** The AMQP_PREFIX; the queue is `<prefix>edge.replies.<uuid>`. */
  prefix: string;
  /** Replies handled at once; each is a quick hand-off to a waiting request. */
  prefetch?: number;
  logger: Logger;
  /**
   * The first reply of a job's answer was handed to its waiting request, but its acknowledgement
   * may not have reached the broker (dropped with the channel, or sent just before it closed):
   * the broker may give the reply back, and should that copy go unread (its queue replaced),
   * billing must not refund it as an answer nobody received (ADR 0068).
   */
  onAnswerAckLost?(jobId: string): void;
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
 * The queue outlives edge's connection and a broker restart: replies sent
 * meanwhile wait until edge has reconnected, so its waiting requests still get their answers.
 * A reply left unread for `REPLY_UNREAD_TTL_MS` (this edge died) is dead-lettered to
 * `billing.unread-replies`, where billing refunds a final one: an answer nobody received is not
 * charged.
 */
export class ReplyRouter {
  #queue: string;
  readonly #options: ReplyRouterOptions;
  /** Waiting jobs by id, each with the queue its replies were told to go to. */
  readonly #listeners = new Map<string, { listener: ReplyListener; queue: string }>();
  /** First replies of an answer handed to a waiting request, until their outcome is applied. */
  readonly #handedOver = new WeakMap<Delivery, string>();
  #consumer: Consumer | null = null;

  constructor(options: ReplyRouterOptions) {
    this.#options = options;
    this.#queue = replyQueueName(options.prefix, randomUUID());
  }

  /** Where a job published now must send its replies. */
  get queue(): string {
    return this.#queue;
  }

  get ready(): boolean {
    return this.#consumer !== null;
  }

  /**
   * Edge is ready for jobs only once its reply queue is consumed: the HTTP server listens
   * before the queue is declared, and while a lost queue is being replaced. Without this a
   * client that waited for `/readyz` could still be told 503 "starting" by the job path.
   */
  get readiness(): ReadinessCheck {
    return {
      name: 'replies',
      check: async () => {
        if (!this.ready) throw new Error('reply queue not consumed yet');
      },
    };
  }

  /** Jobs waiting for replies (for tests and metrics). */
  get waiting(): number {
    return this.#listeners.size;
  }

  async start(): Promise<void> {
    const { bus } = this.#options;
    const queue = this.#queue;
    await bus.declareQueue(
      {
        name: queue,
        kind: 'transient',
        outlivesConnection: {
          expiresMs: REPLY_QUEUE_EXPIRES_MS,
          messageTtlMs: REPLY_UNREAD_TTL_MS,
          deadLetterQueue: gatewayNames(this.#options.prefix).queues.unreadReplies,
        },
      },
      { onLost: () => void this.#replace(queue) },
    );
    this.#consumer = await bus.consume(queue, (delivery) => this.#route(delivery), {
      prefetch: this.#options.prefetch ?? DEFAULT_PREFETCH,
      onOutcomeUncertain: (delivery, outcome) => {
        const jobId = this.#handedOver.get(delivery);
        if (outcome === 'ack' && jobId !== undefined) this.#options.onAnswerAckLost?.(jobId);
      },
    });
  }

  /**
   * The queue's broker node is down (a cluster): replies sent to it are refused or wait for
   * that node, perhaps for good. New jobs get a new queue at once; the jobs that named the old
   * one stop waiting (each voids or refunds its hold and cancels its job, as on a timeout), so
   * their clients can retry now instead of after the reply timeout.
   */
  async #replace(lost: string): Promise<void> {
    if (this.#queue !== lost) return;
    const { logger } = this.#options;
    this.#queue = replyQueueName(this.#options.prefix, randomUUID());
    this.#consumer = null;
    const stranded = [...this.#listeners.values()].filter((entry) => entry.queue === lost);
    logger.warn({ waiting: stranded.length }, 'reply queue lost with its broker node: replaced');
    for (const { listener } of stranded) listener.replyPathLost();
    for (let attempt = 1; this.#consumer === null; attempt += 1) {
      try {
        await this.start();
      } catch (error) {
        // The connection may be going again; the next attempt comes with it (bounded backoff).
        logger.warn({ err: error, attempt }, 'replacement reply queue not declared yet');
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 200 * 2 ** attempt)));
      }
    }
  }

  async stop(): Promise<void> {
    const consumer = this.#consumer;
    this.#consumer = null;
    await consumer?.cancel();
  }

  /** Routes the replies of `jobId` to `listener` until the returned function is called. */
  listen(jobId: string, listener: ReplyListener): () => void {
    const entry = { listener, queue: this.#queue };
    this.#listeners.set(jobId, entry);
    return () => {
      if (this.#listeners.get(jobId) === entry) this.#listeners.delete(jobId);
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
    const listener = this.#listeners.get(reply.jobId)?.listener;
    if (listener) {
      listener.push(reply);
      // The reply billing would refund were it to come back unread (settlement-consumer.ts).
      if (reply.seq === 0 && reply.type !== 'error') this.#handedOver.set(delivery, reply.jobId);
    } else this.#options.logger.debug({ jobId: reply.jobId, seq: reply.seq }, 'late reply dropped');
    return 'ack';
  }
}

/** Where a job's cancellation goes (`JobPublisher.publishCancel`, inference-jobs.ts). */
export interface CancelPublisher {
  publishCancel(cancel: InferenceCancelPayload): Promise<void>;
}

export interface RunningJobOptions {
  jobId: string;
  holdId: string;
  replyTimeoutMs: number;
  publisher: CancelPublisher;
  releases: HoldReleases;
  log: Logger;
}

/**
 * What the job cost after edge gave up waiting: `nothing` once the hold is
 * known voided or refunded (the Idempotency-Key may be used again), `maybe` when billing did not
 * say or a stream's chunks reached the client (the key stays spent: never run twice).
 */
export type ChargeAfterGivingUp = 'nothing' | 'maybe';

/** A chunk or the final reply; error replies surface as thrown GatewayErrors. */
export type JobReply = InferenceReplyPayload & { type: 'chunk' | 'final' };

/**
 * One published synchronous job, from edge's side: its replies in order, each awaited at most
 * `replyTimeoutMs`. Silence past that cancels the job, voids the hold (the worker's settlement,
 * if it raced us, wins at billing) and fails with 500 GATEWAY_TIMEOUT.
 */
export class RunningJob {
  readonly jobId: string;
  readonly #options: RunningJobOptions;
  readonly #replies = new ReplySequence();
  /** The run of the job whose replies we take (`attemptId`); others are never spliced in. */
  #attemptId: string | undefined;
  #chunksSeen = false;
  readonly #abandoned = new Set<string>();
  #detach: () => void = () => {};
  #holdFinal: () => void = () => {};
  #finished = false;
  #cancelledByClient = false;
  #kept = false;
  /** Set when the reply path was lost: how, for the client's message. */
  #replyPathLost: string | undefined;
  #chargeAfterGivingUp: ChargeAfterGivingUp | undefined;

  constructor(options: RunningJobOptions) {
    this.jobId = options.jobId;
    this.#options = options;
  }

  attach(detach: () => void): void {
    this.#detach = detach;
  }

  /**
   * Called once edge knows the hold is final: a final reply with its settled cost (the worker
   * settles before it replies), or edge voided or refunded it after giving up.
   */
  onHoldFinal(callback: () => void): void {
    this.#holdFinal = callback;
  }

  push(reply: InferenceReplyPayload): void {
    const { attemptId } = reply;
    if (attemptId !== undefined && attemptId !== this.#attemptId && !this.#bind(attemptId)) return;
    if (reply.type === 'chunk') this.#chunksSeen = true;
    this.#replies.push(reply);
  }

  /**
   * A reply of another run of the job (redelivered after a worker died). Before any chunk the
   * new run simply replaces the old one (a non-streamed answer is whichever run finishes);
   * after chunks, its text cannot continue the old one's: the stream ends with an error and
   * the job is cancelled (the new run settles what it produced). False: drop the reply.
   */
  #bind(attemptId: string): boolean {
    if (this.#abandoned.has(attemptId)) return false;
    if (this.#attemptId === undefined) {
      this.#attemptId = attemptId;
      return true;
    }
    if (this.#chunksSeen) {
      this.#interrupt();
      return false;
    }
    this.#abandoned.add(this.#attemptId);
    this.#attemptId = attemptId;
    this.#replies.restart();
    return true;
  }

  #interrupt(): void {
    if (this.#finished) return;
    const { log, jobId } = this.#options;
    log.warn({ jobId }, 'a second run of a streamed job answered: ending the stream');
    this.#end(() => new GatewayError('GATEWAY_TIMEOUT', 'The model was interrupted; retry'));
    void this.#publishCancel('timeout');
  }

  /** The reply queue this job named was lost with its broker node (or `how`): give up now. */
  replyPathLost(how = 'lost with a message broker node'): void {
    this.#replyPathLost = how;
    this.#replies.expire();
  }

  /** The next chunk or the final reply. Throws the job's error, or GATEWAY_TIMEOUT. */
  async next(): Promise<JobReply> {
    const reply = await this.#replies.next(this.#options.replyTimeoutMs);
    if (reply === 'timeout') {
      await this.#giveUp();
      throw new GatewayError(
        'GATEWAY_TIMEOUT',
        this.#replyPathLost === undefined
          ? 'The model did not answer in time'
          : `The answer was ${this.#replyPathLost}; retry`,
      );
    }
    if (reply.type === 'chunk') return reply as JobReply;
    this.dispose();
    if (reply.type === 'error') {
      throw gatewayErrorFromWire(reply.error ?? { code: 'internal_error', message: 'Failed' });
    }
    // A settlement the worker queued (billing did not answer) has not happened yet.
    if (reply.settlementPending !== true) this.#holdFinal();
    return reply as JobReply;
  }

  /** The final reply of a job that streams no chunks (chunks, if any, are skipped). */
  async final(): Promise<JobReply> {
    for (;;) {
      const reply = await this.next();
      if (reply.type === 'final') return reply;
    }
  }

  /**
   * The job no longer belongs to its HTTP request (a stored background response owns it): the
   * client's departure does not cancel it any more.
   */
  keepAfterClientLeaves(): void {
    this.#kept = true;
  }

  /** The client went away: the worker stops and settles only what was generated. */
  cancel(): void {
    if (this.#finished || this.#kept) return;
    this.#cancelledByClient = true;
    this.dispose();
    void this.#publishCancel('client_disconnected');
  }

  /** Whether edge stopped waiting for this job (its last reply came, or it gave up). */
  get ended(): boolean {
    return this.#finished;
  }

  /** Whether the client's departure cancelled the job (it may have been charged in part). */
  get cancelledByClient(): boolean {
    return this.#cancelledByClient;
  }

  /** Set once edge gave up waiting: whether the request may have been charged. */
  get chargeAfterGivingUp(): ChargeAfterGivingUp | undefined {
    return this.#chargeAfterGivingUp;
  }

  /** Stops listening; later replies of this job are dropped. */
  dispose(): void {
    this.#end(() => new GatewayError('GATEWAY_TIMEOUT', 'The job was cancelled'));
  }

  #end(reason: () => GatewayError): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#detach();
    this.#replies.close(reason);
  }

  /**
   * Edge will not send this job's answer, and nothing of it was sent: its Idempotency-Key record
   * could not be written (ADR 0067). Cancels the job and voids its hold, or refunds it if the
   * job settled first.
   */
  async abandon(): Promise<void> {
    await this.#giveUp('answer not sent', 'refund');
  }

  async #giveUp(
    why = this.#replyPathLost === undefined ? 'no reply in time' : 'reply path lost',
    // No answer reached the client: void the hold, or — when the worker settled it first (its
    // final reply was lost with edge's reply queue, or came just too late) — refund it, unless
    // streamed chunks reached the client (those are charged, billing policy).
    ifSettled: 'refund' | 'keep' = this.#chunksSeen ? 'keep' : 'refund',
  ): Promise<void> {
    this.dispose();
    const { log, jobId, holdId, releases } = this.#options;
    log.warn({ jobId }, `${why}: cancelling the job and voiding its hold`);
    await this.#publishCancel('timeout');
    const release = await releases.release({ holdId, jobId, ifSettled, log }, () =>
      this.#holdFinal(),
    );
    if (release === 'refunded') log.warn({ jobId }, 'settled answer never received: refunded');
    this.#chargeAfterGivingUp =
      release === 'voided' || release === 'refunded' ? 'nothing' : 'maybe';
  }

  async #publishCancel(reason: 'client_disconnected' | 'timeout'): Promise<void> {
    const { publisher, log, jobId } = this.#options;
    await publisher.publishCancel({ jobId, reason }).catch((error: unknown) => {
      log.warn({ err: error, jobId, reason }, 'cancel not published');
    });
  }
}

/** Out-of-order replies held back at most; a job never has that many chunks in flight. */
const MAX_HELD_BACK = 4096;

type Waiter = {
  resolve: (reply: InferenceReplyPayload | 'timeout') => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
};

/**
 * The replies of one job, handed out in `seq` order (0, 1, 2...) whatever order they arrived in;
 * a repeated `seq` (a redelivered message) is dropped. `next` waits a bounded time.
 */
export class ReplySequence {
  #expected = 0;
  readonly #heldBack = new Map<number, InferenceReplyPayload>();
  readonly #ready: InferenceReplyPayload[] = [];
  #waiter: Waiter | null = null;
  /** Set by `expire`: every wait ends at once, as if timed out. */
  #expired = false;
  /** Set once closed: builds the reason (an Error is built only if someone is told). */
  #closed: (() => Error) | null = null;

  push(reply: InferenceReplyPayload): void {
    if (this.#closed || reply.seq < this.#expected || this.#heldBack.has(reply.seq)) return;
    if (this.#heldBack.size >= MAX_HELD_BACK) return;
    this.#heldBack.set(reply.seq, reply);
    for (let next = this.#heldBack.get(this.#expected); next;) {
      this.#heldBack.delete(this.#expected);
      this.#ready.push(next);
      this.#expected += 1;
      next = this.#heldBack.get(this.#expected);
    }
    this.#wake();
  }

  /** The next reply in order, or 'timeout' when none came within `timeoutMs`. */
  next(timeoutMs: number): Promise<InferenceReplyPayload | 'timeout'> {
    if (this.#closed) return Promise.reject(this.#closed());
    const ready = this.#ready.shift();
    if (ready) return Promise.resolve(ready);
    if (this.#waiter) return Promise.reject(new Error('one reader at a time'));
    if (this.#expired) return Promise.resolve('timeout');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        resolve('timeout');
      }, timeoutMs);
      this.#waiter = { resolve, reject, timer };
    });
  }

  /** No more replies will come: a waiting and every later `next` times out at once. */
  expire(): void {
    this.#expired = true;
    const waiter = this.#waiter;
    this.#waiter = null;
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve('timeout');
    }
  }

  /**
   * Starts over from seq 0 for another run of the job (a waiting reader keeps waiting); the
   * replies of the old run not read yet are dropped.
   */
  restart(): void {
    this.#expected = 0;
    this.#heldBack.clear();
    this.#ready.length = 0;
  }

  /**
   * Ends the sequence: a pending and every later `next` rejects with `reason()`. Lazy because
   * every finished job closes its sequence and almost never has a reader left to tell (an
   * Error per job, with its stack, was 1 % of edge's CPU).
   */
  close(reason: () => Error): void {
    this.#closed ??= reason;
    const waiter = this.#waiter;
    this.#waiter = null;
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.reject(reason());
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    const ready = waiter ? this.#ready.shift() : undefined;
    if (!waiter || !ready) return;
    this.#waiter = null;
    clearTimeout(waiter.timer);
    waiter.resolve(ready);
  }
}
