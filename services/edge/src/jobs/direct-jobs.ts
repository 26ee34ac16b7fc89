/*
 * Synchronous jobs handed to a worker over HTTP (ADR 0072, contracts' worker-api.ts): the job in
 * a POST, its replies read from the answer's lines and pushed to the waiting request as the
 * reply queue would. A worker that does not take the job (refused, unreachable) leaves it to the
 * queue; once taken, a broken answer is a lost reply path (the request gives up and releases
 * the hold, as for a reply queue lost with its broker node).
 */
import { StringDecoder } from 'node:string_decoder';
import { Pool } from 'undici';
import {
  EnvelopeError,
  makeEnvelope,
  parseEnvelope,
  WORKER_ACCEPT_BY_HEADER,
  WORKER_JOBS_PATH,
  type InferenceJobPayload,
} from '@gateway/contracts';
import {
  injectTraceContext,
  SpanKind,
  tracingEnabled,
  withSpan,
  type Logger,
} from '@gateway/observability';
import { INTERNAL_TOKEN_HEADER, REQUEST_ID_HEADER } from '@gateway/runtime';
import type { ReplyListener } from './job-replies.js';

export interface DirectJobsOptions {
  /** The workers' base URLs (`WORKER_URLS`): one Service address, or each process's. */
  urls: string[];
  /** Edge's credential at the workers (their `EDGE_INTERNAL_TOKEN`). */
  token: string;
  /**
   * How long a worker has to take the job (its answer's headers); it refuses a job it reads
   * later (`WORKER_ACCEPT_BY_HEADER`), and edge queues it once this and a margin have passed.
   */
  acceptTimeoutMs: number;
  /** Connections kept to each URL: direct jobs running at once, per URL. */
  connections: number;
  logger: Logger;
}

/** A job a worker took: its replies go to the listener until it ends. */
export interface DirectJob {
  /** Edge stops waiting before the last reply (the client left, a timeout): close the call. */
  abandon(): void;
}

/**
 * A job no worker took, to be queued: `refused` when a worker said so; `unknown` when the call
 * failed after the job may have been sent, so that a worker may have read it: the queued copy is
 * then marked a redelivery, and its worker reads the hold before calling a model.
 */
export type NotTaken = 'refused' | 'unknown';

/** How long a socket stays idle for reuse: below the worker's server keep-alive (5 s). */
const KEEP_ALIVE_TIMEOUT_MS = 4_000;
/**
 * Past the worker's time to take a job, edge waits this much more before it queues the job: a
 * worker whose clock runs behind edge's by less still refuses it then.
 */
const ACCEPT_MARGIN_MS = 1_000;
/** A worker URL that failed to answer is skipped this long (its jobs are queued meanwhile). */
const SKIP_AFTER_FAILURE_MS = 5_000;
/** The longest line of an answer: a reply carries at most one message's worth. */
const MAX_LINE_BYTES = 4 * 1024 * 1024 + 1024;

export class DirectJobs {
  readonly #options: DirectJobsOptions;
  readonly #pools: Pool[];
  /** Per URL: until when it is skipped, after a call that failed without an answer. */
  readonly #skipUntilMs: number[];
  #next = 0;
  readonly #tracing = tracingEnabled();
  /** Direct jobs running, all URLs together: past `connections` × URLs, the queue takes them. */
  #inFlight = 0;

  constructor(options: DirectJobsOptions) {
    this.#options = options;
    this.#pools = options.urls.map(
      (url) =>
        new Pool(new URL(url).origin, {
          connections: options.connections,
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
          keepAliveMaxTimeout: KEEP_ALIVE_TIMEOUT_MS,
          headersTimeout: options.acceptTimeoutMs + ACCEPT_MARGIN_MS,
          // A stream may be silent between chunks as long as its model is; edge's own reply
          // timeout bounds the wait (RunningJob).
          bodyTimeout: 0,
          connect: { timeout: options.acceptTimeoutMs },
        }),
    );
    this.#skipUntilMs = this.#pools.map(() => 0);
  }

  /**
   * Hands the job to the next worker, or says why the caller must queue it: refused, or no
   * answer (unreachable, or nothing before `acceptTimeoutMs` and a margin).
   */
  async offer(job: InferenceJobPayload, listener: ReplyListener): Promise<DirectJob | NotTaken> {
    const index = this.#next;
    this.#next = (this.#next + 1) % this.#pools.length;
    const pool = this.#pools[index];
    // A call past the pool's connections would wait in it, not in the queue, where any
    // worker's free slot takes it. A worker that just failed to answer is left alone a while.
    if (
      pool === undefined ||
      this.#inFlight >= this.#options.connections * this.#pools.length ||
      Date.now() < (this.#skipUntilMs[index] ?? 0)
    ) {
      return 'refused';
    }
    this.#inFlight += 1;
    let taken: DirectJob | NotTaken;
    try {
      taken = await this.#hand(pool, job, listener);
    } catch (error) {
      // A job that cannot even be sent (its envelope did not serialise) takes no slot with it.
      this.#inFlight -= 1;
      throw error;
    }
    if (typeof taken === 'string') this.#inFlight -= 1;
    if (taken === 'unknown') this.#skipUntilMs[index] = Date.now() + SKIP_AFTER_FAILURE_MS;
    return taken;
  }

  async #hand(
    pool: Pool,
    job: InferenceJobPayload,
    listener: ReplyListener,
  ): Promise<DirectJob | NotTaken> {
    const controller = new AbortController();
    const body = JSON.stringify(makeEnvelope('inference.job', job));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [INTERNAL_TOKEN_HEADER]: this.#options.token,
      [WORKER_ACCEPT_BY_HEADER]: String(Date.now() + this.#options.acceptTimeoutMs),
      ...(job.requestId === undefined ? {} : { [REQUEST_ID_HEADER]: job.requestId }),
    };
    const send = () =>
      pool.request({
        method: 'POST',
        path: WORKER_JOBS_PATH,
        headers,
        body,
        signal: controller.signal,
      });
    let answer;
    try {
      // While tracing: a CLIENT span until the worker took the job, parent of its SERVER span.
      answer = this.#tracing
        ? await withSpan(
            'hand job to worker',
            { kind: SpanKind.CLIENT, attributes: { 'server.address': 'inference-worker' } },
            async () => {
              injectTraceContext(headers);
              return send();
            },
          )
        : await send();
    } catch (error) {
      // No headers: the worker did not take the job (the headers are its acceptance, sent
      // before it calls a model), so the queue may have it; a worker that read it too late
      // refuses it (`WORKER_ACCEPT_BY_HEADER`).
      this.#options.logger.warn({ err: error, jobId: job.jobId }, 'direct job not taken: queued');
      return 'unknown';
    }
    // A 200 is the worker's acceptance whatever follows: an answer that is no reply stream is a
    // lost run (queued again as a redelivery), never a refusal (queued as new: it may run).
    if (answer.statusCode !== 200) {
      const level = answer.statusCode === 503 ? 'debug' : 'error';
      this.#options.logger[level](
        { status: answer.statusCode, jobId: job.jobId },
        'direct job refused: queued',
      );
      await answer.body.dump().catch(() => undefined);
      return 'refused';
    }
    const read = { lastReply: false };
    void readReplies(answer.body, listener, read, this.#options.logger).then((complete) => {
      this.#inFlight -= 1;
      if (!complete) listener.replyPathLost('lost on its way from the worker');
    });
    return {
      // After the last reply the answer ends by itself, and its connection is reused.
      abandon: () => {
        if (!read.lastReply) controller.abort();
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools.map((pool) => pool.close()));
  }
}

/**
 * Pushes each line's reply to the listener; true when the answer ended after the job's last
 * reply (`final` or `error`, which sets `read.lastReply`), false when it broke off before it or
 * carried garbage.
 */
async function readReplies(
  body: AsyncIterable<Buffer>,
  listener: ReplyListener,
  read: { lastReply: boolean },
  logger: Logger,
): Promise<boolean> {
  let pending = '';
  // A character split between two chunks is joined, not replaced.
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of body) {
      pending += decoder.write(chunk);
      let newline = pending.indexOf('\n');
      while (newline !== -1) {
        const reply = parseEnvelope('inference.reply', pending.slice(0, newline)).payload;
        pending = pending.slice(newline + 1);
        listener.push(reply);
        if (reply.type !== 'chunk') read.lastReply = true;
        newline = pending.indexOf('\n');
      }
      if (pending.length > MAX_LINE_BYTES) throw new Error('reply line over the size limit');
    }
    return read.lastReply && pending.length === 0;
  } catch (error) {
    // Aborted by edge itself (`abandon`), the worker gone, or a line that is no reply.
    if (error instanceof EnvelopeError) logger.error({ err: error }, 'bad direct reply');
    return read.lastReply;
  }
}
