/*
 * Runs one job to a durable outcome (model call, hold settled or voided, reply and completion
 * published), and keeps the running jobs by id so a cancellation can abort the one running here.
 */
import { GatewayError, microDzdToDzd, type InferenceJobPayload } from '@gateway/contracts';
import type { Dispatcher } from 'undici';
import { executeChat, partialChatUsage } from '../backends/chat.js';
import type {
  ExecutionContext,
  ExecutionResult,
  ExternalProvider,
  UpstreamTimeouts,
} from '../backends/context.js';
import { executeMedia } from '../backends/media.js';
import { executeNative } from '../backends/native.js';
import type { BillingClient } from '../billing/billing-client.js';
import { UpstreamError } from '../upstream/errors.js';
import type { NodeRegistry } from '../upstream/node-pool.js';
import {
  pendingCostMicroDzd,
  refundDurably,
  settleDurably,
  trySettle,
  voidDurably,
  type JobOutbox,
} from './outbox.js';

/**
 * Why a job's signal was aborted: the client went away, or the generation ran past the
 * worker's overall cap (`JOB_MAX_GENERATION_MS`). Both bill what was produced.
 */
export type AbortCause = 'cancelled' | 'generation_cap';

export class JobAborted extends Error {
  constructor(readonly abortCause: AbortCause) {
    super(`job ${abortCause}`);
  }
}

const MAX_REMEMBERED = 10_000;

/**
 * Running jobs by id, so a cancellation broadcast can abort the one running here; and recent
 * cancellations, so a job cancelled while still queued is dropped when it arrives.
 */
export class Cancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly remembered = new Map<string, number>();

  constructor(private readonly memoryMs: number) {}

  register(jobId: string): AbortController {
    const controller = new AbortController();
    this.running.set(jobId, controller);
    return controller;
  }

  unregister(jobId: string): void {
    this.running.delete(jobId);
  }

  cancel(jobId: string): void {
    this.running.get(jobId)?.abort(new JobAborted('cancelled'));
    this.remember(jobId);
  }

  wasCancelled(jobId: string): boolean {
    const expiresAtMs = this.remembered.get(jobId);
    return expiresAtMs !== undefined && expiresAtMs > Date.now();
  }

  private remember(jobId: string): void {
    this.remembered.delete(jobId);
    this.remembered.set(jobId, Date.now() + this.memoryMs);
    // Oldest first (Map keeps insertion order): bounded memory whatever the cancel rate.
    for (const [id, expiresAtMs] of this.remembered) {
      if (this.remembered.size <= MAX_REMEMBERED && expiresAtMs > Date.now()) break;
      this.remembered.delete(id);
    }
  }
}

export interface JobRunnerDeps {
  billing: BillingClient;
  registry: NodeRegistry;
  upstreamAgent: Dispatcher;
  cancellations: Cancellations;
  timeouts: UpstreamTimeouts;
  responseMaxBytes: number;
  maxAttempts: number;
  external: ExternalProvider | undefined;
  onAttemptFailed?(failure: string): void;
}

/**
 * How a job ended, for logs and metrics. Every path has finalised the hold; `already_final`: a
 * redelivered job whose hold an earlier run (or edge, or the sweeper) had already finalised;
 * `undelivered`: an answer nobody could receive (edge's reply queue gone), not charged.
 */
export type JobResult =
  'succeeded' | 'failed' | 'cancelled' | 'expired' | 'already_final' | 'undelivered';

/**
 * Runs one job to a durable outcome: the model call, then the hold settled (success, or a
 * cancellation with output) or voided (failure), then the reply/completion published. Throws
 * only when the outcome could not be made durable (billing or broker unreachable): the caller
 * then leaves the message to be redelivered.
 */
export async function runJob(
  job: InferenceJobPayload,
  outbox: JobOutbox,
  deps: JobRunnerDeps,
  redelivered = false,
): Promise<JobResult> {
  const startedMs = Date.now();
  // A redelivery may follow a run that already settled or voided the hold (it died before its
  // ack): running the model again would splice or waste a generation, so ask billing first.
  if (redelivered && (await deps.billing.holdStatus(job.holdId)) !== 'pending') {
    return 'already_final';
  }
  if (deps.cancellations.wasCancelled(job.jobId)) {
    await fail(
      job,
      outbox,
      deps,
      new GatewayError('GATEWAY_TIMEOUT', 'The request was cancelled.'),
      startedMs,
      'cancelled',
    );
    return 'cancelled';
  }
  if (Date.now() >= job.deadlineAtMs) {
    await fail(
      job,
      outbox,
      deps,
      new GatewayError('GATEWAY_TIMEOUT', 'The request waited too long in the queue.'),
      startedMs,
    );
    return 'expired';
  }
  const controller = deps.cancellations.register(job.jobId);
  // The deadline bounds queue wait only (checked above). A started job is bounded by the idle
  // timeouts between chunks and by this cap, far above any real generation: a long stream that
  // keeps producing is delivered and charged, never cut at the deadline.
  const cap = setTimeout(
    () => controller.abort(new JobAborted('generation_cap')),
    deps.timeouts.generationMs,
  );
  let ctx: ExecutionContext | undefined;
  let result: ExecutionResult;
  try {
    const model = await deps.billing.getModel(job.model, job.modelUpdatedAt);
    ctx = {
      job,
      model,
      signal: controller.signal,
      timeouts: deps.timeouts,
      responseMaxBytes: deps.responseMaxBytes,
      registry: deps.registry,
      upstreamAgent: deps.upstreamAgent,
      maxAttempts: deps.maxAttempts,
      external: deps.external,
      progress: { relayed: false, relayedText: '', promptAccepted: false },
      onAttemptFailed: (failure) => deps.onAttemptFailed?.(failure),
      emitChunk: async (chunk) => {
        // Edge's reply queue is gone (edge restarted): nobody will read the rest.
        if (await outbox.chunk(chunk)) return true;
        controller.abort(new JobAborted('cancelled'));
        return false;
      },
    };
    result = await execute(ctx);
  } catch (error) {
    const reason: unknown = controller.signal.reason;
    const cause = reason instanceof JobAborted ? reason.abortCause : undefined;
    if (cause !== undefined && ctx) return cancel(ctx, outbox, deps, cause, startedMs);
    if (!isJobFailure(error) && cause === undefined) throw error;
    await fail(job, outbox, deps, toGatewayError(error, cause), startedMs);
    return 'failed';
  } finally {
    clearTimeout(cap);
    deps.cancellations.unregister(job.jobId);
  }
  return succeed(outbox, deps, result, startedMs);
}

/** Failures of the model or the request: they end the job. Anything else is infrastructure. */
function isJobFailure(error: unknown): boolean {
  return error instanceof UpstreamError || error instanceof GatewayError;
}

function toGatewayError(error: unknown, cause: AbortCause | undefined): GatewayError {
  if (cause === 'generation_cap')
    return new GatewayError('GATEWAY_TIMEOUT', 'The model did not finish in time.');
  if (error instanceof GatewayError) return error;
  if (error instanceof UpstreamError && error.failure === 'rejected') {
    const param = error.detail.param;
    return new GatewayError(
      'invalid_request_body',
      param
        ? `The model does not accept the value of '${param}'.`
        : 'The model refused the request.',
      param ? { param } : {},
    );
  }
  return new GatewayError('GATEWAY_TIMEOUT', 'The model failed to answer; retry shortly.');
}

/**
 * Settles, then answers. A final reply nobody can receive (edge's reply queue is gone: edge
 * died or lost its connection) is not charged: a settled non-streamed
 * answer is refunded; a stream keeps its charge (its chunks reached the client, billing policy).
 * When billing does not answer, the reply goes first and the settlement — or the void, if the
 * reply found nobody — is queued for billing with an async job's completion event.
 */
async function succeed(
  outbox: JobOutbox,
  deps: JobRunnerDeps,
  result: ExecutionResult,
  startedMs: number,
): Promise<JobResult> {
  const { job } = outbox;
  const settled = await trySettle(deps.billing, outbox, result.usage, runTimings(startedMs));
  if (settled.kind === 'already_final') {
    // Edge gave up (voided) or the hold expired: the work cannot be charged, nor delivered.
    await outbox.error('GATEWAY_TIMEOUT', 'The request timed out before the model finished.');
    await outbox.completed({ status: 'failed' }, Date.now() - startedMs);
    return 'expired';
  }
  const priced = settled.kind === 'settled' ? settled : undefined;
  // Billing did not answer: the cost is still known (the hold's prices and the usage, capped at
  // the hold, as billing will settle it); only the balance is not.
  const costMicroDzd = priced?.costMicroDzd ?? pendingCostMicroDzd(job, result.usage);
  const delivered =
    (await outbox.final({
      usage: result.usage,
      costMicroDzd,
      balanceMicroDzd: priced?.balanceMicroDzd,
      ...(priced ? {} : { settlementPending: true }),
      warnings: result.warnings,
      data: result.buildData(costMicroDzd === undefined ? null : microDzdToDzd(costMicroDzd)),
    })) || job.stream;
  const success = {
    status: 'succeeded' as const,
    usage: result.usage,
    ...(result.embeddings ? { embeddings: result.embeddings } : { results: result.results }),
  };
  if (!priced) {
    await outbox.queueSettlement(
      delivered
        ? {
            action: 'settle',
            usage: result.usage,
            completed: success,
            runtimeMs: Date.now() - startedMs,
          }
        : { action: 'void' },
    );
    return delivered ? 'succeeded' : 'undelivered';
  }
  if (!delivered) {
    await refundDurably(deps.billing, outbox);
    return 'undelivered';
  }
  await outbox.completed({ ...success, costMicroDzd: priced.costMicroDzd }, Date.now() - startedMs);
  return 'succeeded';
}

const ABORT_MESSAGES: Record<AbortCause, string> = {
  cancelled: 'The request was cancelled.',
  generation_cap: 'The model did not finish in time.',
};

/**
 * The client went away, or the generation cap was reached: charge the input the node processed
 * and the output it produced (docs/adr/0026-billing-policy-for-failure-paths.md). Nothing is
 * charged only when no node accepted the request and nothing was produced.
 */
async function cancel(
  ctx: ExecutionContext,
  outbox: JobOutbox,
  deps: JobRunnerDeps,
  cause: AbortCause,
  startedMs: number,
): Promise<JobResult> {
  const usage = partialChatUsage(ctx);
  const message = ABORT_MESSAGES[cause];
  const byClient = cause === 'cancelled';
  if (!ctx.progress.promptAccepted && usage.completionTokens === 0) {
    const error = new GatewayError('GATEWAY_TIMEOUT', message);
    await fail(ctx.job, outbox, deps, error, startedMs, byClient ? 'cancelled' : 'failed');
    return 'cancelled';
  }
  const settled = await settleDurably(deps.billing, outbox, usage, {
    ...runTimings(startedMs),
    ...(byClient ? { cancelled: true } : {}),
  });
  await outbox.error('GATEWAY_TIMEOUT', message);
  if (settled.kind !== 'already_final') {
    await outbox.completed({ status: 'failed' }, Date.now() - startedMs);
  }
  return 'cancelled';
}

async function fail(
  job: InferenceJobPayload,
  outbox: JobOutbox,
  deps: JobRunnerDeps,
  error: GatewayError,
  startedMs: number,
  outcome: 'failed' | 'cancelled' = 'failed',
): Promise<void> {
  await voidDurably(deps.billing, outbox, { outcome, ...runTimings(startedMs) });
  await outbox.error(error.code, error.message);
  await outbox.completed({ status: 'failed' }, Date.now() - startedMs);
}

/** For the usage record: when this worker picked the job, and how long it ran. */
const runTimings = (startedMs: number) => ({
  startedAtMs: startedMs,
  generationMs: Math.max(0, Date.now() - startedMs),
});

/** Runs the upstream part of a job: the model call, with failover, relaying chunks. */
function execute(ctx: ExecutionContext): Promise<ExecutionResult> {
  switch (ctx.job.endpoint) {
    case 'chat.completions':
      return executeChat(ctx);
    case 'native':
      return executeNative(ctx);
    default:
      return executeMedia(ctx);
  }
}
