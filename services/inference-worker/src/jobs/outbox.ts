import { randomUUID } from 'node:crypto';
import type { SettleOutcome } from '@gateway/billing-client';
import {
  completedEvent,
  costMicroDzd,
  makeEnvelope,
  microDzdFromWire,
  microDzdToWire,
  type BillingSettlementPayload,
  type CompletedEventJob,
  type Envelope,
  type InferenceJobPayload,
  type InferenceReplyPayload,
  type SettleRequest,
  type UnpricedCompletion,
  type VoidRequest,
} from '@gateway/contracts';
import { BusError, type GatewayNames, type MessageBus } from '@gateway/messaging';
import type { TokenUsage } from '../backends/context.js';
import { billed, BillingUnavailable, type BillingClient } from '../billing/billing-client.js';

/** A job's success, without its cost (billing prices it). */
export interface JobSuccess {
  status: 'succeeded';
  usage: TokenUsage;
  results?: { generated_text: string }[];
  embeddings?: number[][];
}

export type CompletionOutcome = (JobSuccess & { costMicroDzd: bigint }) | { status: 'failed' };

export interface FinalReply {
  usage: TokenUsage;
  /** Both absent when the settlement was queued (billing unreachable): not known yet. */
  costMicroDzd?: bigint;
  balanceMicroDzd?: bigint;
  /** The settlement is queued: `costMicroDzd`, when known, is what billing will charge. */
  settlementPending?: boolean;
  warnings: string[];
  data: Record<string, unknown>;
}

/**
 * Where a synchronous job's replies go: edge's reply queue (`replyTo`), or the HTTP answer of a
 * job edge handed over directly (answer-reply-path.ts). `send` resolves false when nobody can receive
 * the reply any more (the queue is gone, the connection closed); it throws when it could not
 * tell (the broker did not confirm).
 */
export interface ReplyPath {
  send(reply: Envelope<'inference.reply'>): Promise<boolean>;
}

/** Replies published to edge's reply queue, `mandatory`: an unroutable one is not received. */
export function queueReplyPath(bus: MessageBus, replyTo: string): ReplyPath {
  return {
    async send(envelope) {
      try {
        await bus.publish({ queue: replyTo }, envelope, {
          correlationId: envelope.payload.jobId,
        });
        return true;
      } catch (error) {
        // Gone (unroutable), or a `replyTo` this worker's broker user may not send to
        // (forbidden: not a reply queue): either way undeliverable, never worth running the job
        // again.
        if (
          error instanceof BusError &&
          (error.code === 'unroutable' || error.code === 'forbidden')
        ) {
          return false;
        }
        throw error;
      }
    },
  };
}

/**
 * Replies to edge and completion events to the dispatcher, for one job. Replies are best effort
 * (edge's reply queue vanishes with edge or with its client); completion events must be confirmed,
 * or the job is not done.
 */
export class JobOutbox {
  private seq = 0;
  /** This run of the job: edge binds a job to one attempt and never splices two generations. */
  readonly attemptId = randomUUID();
  /** Undefined for an async job: its result travels as its completion event. */
  private readonly replies: ReplyPath | undefined;

  constructor(
    private readonly bus: MessageBus,
    private readonly names: GatewayNames,
    readonly job: InferenceJobPayload,
    replies?: ReplyPath,
  ) {
    this.replies = replies ?? (job.replyTo ? queueReplyPath(bus, job.replyTo) : undefined);
  }

  /** False when edge's reply queue is gone: nobody is listening any more. */
  async chunk(data: Record<string, unknown>): Promise<boolean> {
    return this.reply({ type: 'chunk', data });
  }

  /** False when edge's reply queue is gone: nobody can receive the answer (sync jobs only). */
  async final(reply: FinalReply): Promise<boolean> {
    const { usage } = reply;
    const routed = await this.reply({
      type: 'final',
      data: reply.data,
      usage: { ...usage, totalTokens: usage.promptTokens + usage.completionTokens },
      ...(reply.costMicroDzd === undefined
        ? {}
        : { costMicroDzd: microDzdToWire(reply.costMicroDzd) }),
      ...(reply.balanceMicroDzd === undefined
        ? {}
        : {
            balanceMicroDzd: microDzdToWire(
              reply.balanceMicroDzd < 0n ? 0n : reply.balanceMicroDzd,
            ),
          }),
      ...(reply.warnings.length > 0 ? { warnings: reply.warnings } : {}),
      ...(reply.settlementPending === true ? { settlementPending: true } : {}),
    });
    return routed || this.replies === undefined;
  }

  async error(code: string, message: string): Promise<void> {
    await this.reply({ type: 'error', error: { code, message } });
  }

  async completed(outcome: CompletionOutcome, runtimeMs: number): Promise<void> {
    const job = this.completedJob(runtimeMs);
    if (!job) return;
    await this.bus.publish(
      {
        exchange: this.names.exchanges.events,
        routingKey: this.names.routingKeys.inferenceCompleted,
      },
      outcome.status === 'failed'
        ? completedEvent({ outcome: 'failed', job })
        : completedEvent({
            outcome: 'succeeded',
            unpriced: unpriced(job, outcome),
            costMicroDzd: outcome.costMicroDzd,
          }),
      { correlationId: this.job.jobId },
    );
  }

  /**
   * Billing did not answer: the end of the hold goes to billing's settlement queue (persistent,
   * confirmed), and billing applies it when it can. An async job's success event travels with
   * it, without its cost, for billing to publish once priced.
   */
  async queueSettlement(
    settlement:
      | { action: 'settle'; usage: TokenUsage; completed?: JobSuccess; runtimeMs?: number }
      | { action: 'void' | 'refund' },
  ): Promise<void> {
    const { job } = this;
    let completed: UnpricedCompletion | undefined;
    if (settlement.action === 'settle' && settlement.completed) {
      const completedJob = this.completedJob(settlement.runtimeMs ?? 0);
      if (completedJob) completed = unpriced(completedJob, settlement.completed);
    }
    const payload: BillingSettlementPayload = {
      holdId: job.holdId,
      jobId: job.jobId,
      ...(job.requestId === undefined ? {} : { requestId: job.requestId }),
      action: settlement.action,
      ...(settlement.action === 'settle' ? billed(settlement.usage) : {}),
      producedAtMs: Date.now(),
      ...(completed ? { completed } : {}),
    };
    await this.bus.publish(
      { queue: this.names.queues.billingSettlements },
      makeEnvelope('billing.settlement', payload),
      { correlationId: job.jobId },
    );
  }

  /** The job's side of its completion event; undefined when it has none (not a webhook job). */
  private completedJob(runtimeMs: number): CompletedEventJob | undefined {
    const { job } = this;
    if (!job.webhookUrl) return undefined;
    return {
      jobId: job.jobId,
      ...(job.requestId === undefined ? {} : { requestId: job.requestId }),
      accountId: job.accountId,
      model: job.model,
      webhookUrl: job.webhookUrl,
      ...(job.webhookFormat ? { webhookFormat: job.webhookFormat } : {}),
      runtimeMs: Math.max(0, Math.round(runtimeMs)),
      completedAtMs: Date.now(),
    };
  }

  private async reply(fields: Omit<InferenceReplyPayload, 'jobId' | 'seq'>): Promise<boolean> {
    if (!this.replies) return false;
    const { jobId } = this.job;
    const payload = { jobId, attemptId: this.attemptId, seq: this.seq, ...fields };
    this.seq += 1;
    return this.replies.send(makeEnvelope('inference.reply', payload as InferenceReplyPayload));
  }
}

/** A success event without its cost: for `completedEvent`, or queued for billing to price. */
function unpriced(job: CompletedEventJob, success: JobSuccess): UnpricedCompletion {
  return {
    ...job,
    status: 'succeeded',
    usage: success.usage,
    ...(success.embeddings
      ? { embeddings: success.embeddings }
      : { results: success.results ?? [] }),
  };
}

/**
 * What the usage record keeps beyond the tokens (timings, a cancellation). A settlement queued
 * because billing did not answer carries only the tokens: its record has no latencies.
 */
export type SettleReport = Omit<SettleRequest, 'inputTokens' | 'outputTokens'>;

/** Billing did not answer: the caller queues what the hold needs (cost not known yet). */
export type SettleAttempt = SettleOutcome | { kind: 'unanswered' };

/**
 * Settles the job's hold over HTTP (the fast path). When billing does not answer (after the
 * client's retries) the caller queues the settlement instead (the settlement outbox,
 * docs/job-protocol.md §5): the answer exists, so the model must not run again and the charge
 * must not be lost.
 */
export async function trySettle(
  billing: BillingClient,
  outbox: JobOutbox,
  usage: TokenUsage,
  report: SettleReport = {},
): Promise<SettleAttempt> {
  return unanswered(() => billing.settle(outbox.job.holdId, { ...billed(usage), ...report }));
}

/** Settles the job's hold; queued for billing when it does not answer. */
export async function settleDurably(
  billing: BillingClient,
  outbox: JobOutbox,
  usage: TokenUsage,
  report: SettleReport = {},
): Promise<SettleAttempt> {
  const settled = await trySettle(billing, outbox, usage, report);
  if (settled.kind === 'unanswered') await outbox.queueSettlement({ action: 'settle', usage });
  return settled;
}

/** Voids the job's hold; queued for billing when it does not answer. */
export async function voidDurably(
  billing: BillingClient,
  outbox: JobOutbox,
  report?: VoidRequest,
): Promise<void> {
  const voided = await unanswered(() => billing.void(outbox.job.holdId, report));
  if (voided.kind === 'unanswered') await outbox.queueSettlement({ action: 'void' });
}

/** Gives the settled charge back (its answer reached nobody); queued when billing is away. */
export async function refundDurably(billing: BillingClient, outbox: JobOutbox): Promise<void> {
  const refunded = await unanswered(() => billing.refund(outbox.job.holdId));
  if ('kind' in refunded) await outbox.queueSettlement({ action: 'refund' });
}

async function unanswered<T>(call: () => Promise<T>): Promise<T | { kind: 'unanswered' }> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof BillingUnavailable)) throw error;
    return { kind: 'unanswered' };
  }
}

/**
 * What billing will charge when it applies a queued settlement: the usage at
 * the hold's snapshotted prices, capped at the hold, by the one cost function billing's own
 * worst case and settlement agree with. Undefined when the job does not carry its pricing (an
 * admission that was a replay).
 */
export function pendingCostMicroDzd(
  job: InferenceJobPayload,
  usage: TokenUsage,
): bigint | undefined {
  const { pricing } = job;
  if (!pricing) return undefined;
  const cost = costMicroDzd({
    inputTokens: usage.promptTokens,
    outputTokens: usage.completionTokens,
    inputPriceMicroDzdPerM: microDzdFromWire(pricing.inputMicroDzdPerM),
    outputPriceMicroDzdPerM: microDzdFromWire(pricing.outputMicroDzdPerM),
    priority: job.serviceTier === 'priority',
  });
  const hold = microDzdFromWire(pricing.holdMicroDzd);
  return cost < hold ? cost : hold;
}
