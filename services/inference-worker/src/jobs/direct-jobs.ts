/*
 * Synchronous jobs edge hands over directly (ADR 0072, contracts' worker-api.ts): the job in a
 * POST, its replies as lines of the answer. Served on the ops port's server but outside Express:
 * this is on every request's path, and the access log, metrics middleware and router cost more
 * than the job's hand-over itself. Everything after the hand-over is the queue path's: the same
 * `runJob`, with the answer as its reply path.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  EnvelopeError,
  GatewayError,
  parseEnvelope,
  toErrorBody,
  WORKER_ACCEPT_BY_HEADER,
  WORKER_JOBS_PATH,
  WORKER_REPLIES_CONTENT_TYPE,
  type InferenceJobPayload,
} from '@gateway/contracts';
import { DEFAULT_MAX_MESSAGE_BYTES, type GatewayNames, type MessageBus } from '@gateway/messaging';
import {
  contextFromHeaders,
  SpanKind,
  tracingEnabled,
  withSpan,
  type Logger,
} from '@gateway/observability';
import {
  INTERNAL_TOKEN_HEADER,
  internalCallerMatcher,
  pathOf,
  withRequestId,
} from '@gateway/runtime';
import type { WorkerMetrics } from './metrics.js';
import { answerReplyPath } from './answer-reply-path.js';
import { JobOutbox } from './outbox.js';
import { runJob, type JobRunnerDeps } from './run-job.js';

export interface DirectJobsOptions {
  /** Edge's credential at the worker (`EDGE_INTERNAL_TOKEN`). */
  edgeToken: string;
  /** Direct jobs running at once; one more is answered 503 and goes to the queue instead. */
  maxInFlight: number;
  /** False until the consumers run (the bus carries cancellations and queued settlements). */
  accepting(): boolean;
  bus: MessageBus;
  names: GatewayNames;
  deps: JobRunnerDeps;
  logger: Logger;
  metrics: WorkerMetrics;
}

/** `app` with `POST WORKER_JOBS_PATH` served in front of it. */
export function withDirectJobs(app: RequestListener, options: DirectJobsOptions): RequestListener {
  const serve = directJobsHandler(options);
  return (req, res) => {
    if (req.method === 'POST' && pathOf(req.url) === WORKER_JOBS_PATH) void serve(req, res);
    else app(req, res);
  };
}

function directJobsHandler(options: DirectJobsOptions) {
  const callerOf = internalCallerMatcher({ edge: options.edgeToken });
  let inFlight = 0;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (callerOf(req.headers[INTERNAL_TOKEN_HEADER]) === undefined) {
      const error = 'A valid internal service credential is required';
      refuse(req, res, new GatewayError('unauthorized', error));
      return;
    }
    let job: InferenceJobPayload;
    try {
      // Read whole before any answer, a refusal too: an answer sent over a body still
      // arriving ends in a reset, which edge could not tell from a lost job.
      job = await readJob(req);
    } catch (error) {
      refuse(req, res, takingError(error));
      return;
    }
    // Edge gave up on the call before it was taken: nothing was accepted, nothing to do.
    if (res.destroyed) return;
    const refusal = refusalOf(req, inFlight, options);
    if (refusal !== undefined) {
      refuse(req, res, refusal);
      return;
    }
    inFlight += 1;
    try {
      await traced(req, () => runDirect(job, res, options));
    } catch (error) {
      // Taken, but no durable outcome: the answer ends without its last reply, and edge queues
      // the job again as a redelivery.
      options.logger.error({ err: error, jobId: job.jobId }, 'direct job outcome not durable');
      res.destroy();
    } finally {
      inFlight -= 1;
    }
  };
}

/** Why a job read now is not taken: no free slot, stopping, or read past its time. */
function refusalOf(
  req: IncomingMessage,
  inFlight: number,
  options: DirectJobsOptions,
): GatewayError | undefined {
  const details = { retryAfterS: 1 };
  if (inFlight >= options.maxInFlight || !options.accepting()) {
    return new GatewayError('service_unavailable', 'No free slot for a direct job', { details });
  }
  // Read too late (this process was stopped, or slow): edge has queued the job by now.
  if (Date.now() > acceptByMs(req)) {
    return new GatewayError('service_unavailable', 'The job came after its time to be taken', {
      details,
    });
  }
  return undefined;
}

/** While tracing: a SERVER span, child of edge's call, where a queued job has a CONSUMER span. */
function traced(req: IncomingMessage, work: () => Promise<void>): Promise<void> {
  if (!tracingEnabled()) return work();
  const parent = contextFromHeaders(req.headers);
  return withSpan('process direct job', { kind: SpanKind.SERVER, parent }, work);
}

async function runDirect(
  job: InferenceJobPayload,
  res: ServerResponse,
  options: DirectJobsOptions,
): Promise<void> {
  const { deps, metrics } = options;
  const log = options.logger.child({ jobId: job.jobId, requestId: job.requestId });
  res.writeHead(200, { 'content-type': WORKER_REPLIES_CONTENT_TYPE });
  // The headers are the job's acceptance: edge falls back to the queue only before them.
  res.flushHeaders();
  // A connection closed before the last reply is not a cancel: edge sends one (§3) when its
  // client left or it gave up. Edge may have died instead, and then, as for an unread reply
  // queue, nothing the job produces afterwards is charged: its later replies are unroutable.
  const labels = { endpoint: job.endpoint, tier: job.serviceTier };
  const stopTimer = metrics.jobDurationSeconds.startTimer(labels);
  try {
    const outbox = new JobOutbox(options.bus, options.names, job, answerReplyPath(res));
    const result = await withRequestId(job.requestId, () => runJob(job, outbox, deps));
    metrics.jobs.inc({ ...labels, result });
    log.info({ ...labels, result, direct: true }, 'job done');
    res.end(); // no-op when the last reply ended the answer
  } finally {
    stopTimer();
  }
}

/** The latest time the job may be taken; a job without one has no limit. */
function acceptByMs(req: IncomingMessage): number {
  const value = Number(req.headers[WORKER_ACCEPT_BY_HEADER]);
  return Number.isFinite(value) && value > 0 ? value : Number.POSITIVE_INFINITY;
}

/** The body as an `inference.job` envelope, at most the broker's message limit. */
async function readJob(req: IncomingMessage): Promise<InferenceJobPayload> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > DEFAULT_MAX_MESSAGE_BYTES) {
      throw new GatewayError('payload_too_large', 'The job is over the message size limit');
    }
    chunks.push(chunk);
  }
  const job = parseEnvelope('inference.job', Buffer.concat(chunks)).payload;
  if (job.webhookUrl !== undefined) {
    throw new GatewayError('invalid_request_body', 'Only synchronous jobs are taken directly');
  }
  return job;
}

function takingError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof EnvelopeError) {
    return new GatewayError('invalid_request_body', `Not an inference job: ${error.message}`);
  }
  return new GatewayError('internal_error', 'The job could not be taken');
}

/** A refusal in the gateway's error body; the connection stays usable when the body was read. */
function refuse(req: IncomingMessage, res: ServerResponse, error: GatewayError): void {
  if (res.headersSent || res.destroyed) return;
  const retryAfterS = (error.details as { retryAfterS?: number } | undefined)?.retryAfterS;
  res.writeHead(error.status, {
    'content-type': 'application/json',
    ...(retryAfterS === undefined ? {} : { 'retry-after': String(retryAfterS) }),
    // A body not read (refused before it) must not be parsed as the next request.
    ...(req.readableEnded ? {} : { connection: 'close' }),
  });
  res.end(JSON.stringify(toErrorBody(error)));
}
