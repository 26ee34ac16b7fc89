import { randomUUID } from 'node:crypto';
import {
  failedCompletion,
  makeEnvelope,
  microDzdToWire,
  type BillingSettlementPayload,
  type InferenceCompletedPayload,
  type InferenceJobPayload,
  type InferenceReplyPayload,
} from '@gateway/contracts';
import { BusError, type GatewayNames, type MessageBus } from '@gateway/messaging';
import type { TokenUsage } from '../backends/index.js';
import { billed } from '../billing/billed-usage.js';

export type CompletionOutcome =
  | {
      status: 'succeeded';
      usage: TokenUsage;
      /** Absent only in a queued settlement: billing adds it once priced. */
      costMicroDzd?: bigint;
      results?: { generated_text: string }[];
      embeddings?: number[][];
    }
  | { status: 'failed' };

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
 * Replies to edge and completion events to the dispatcher, for one job. Replies are best effort
 * (edge's reply queue vanishes with edge or with its client); completion events must be confirmed,
 * or the job is not done.
 */
export class JobOutbox {
  private seq = 0;
  /** This run of the job: edge binds a job to one attempt and never splices two generations. */
  readonly attemptId = randomUUID();

  constructor(
    private readonly bus: MessageBus,
    private readonly names: GatewayNames,
    readonly job: InferenceJobPayload,
  ) {}

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
    return routed || this.job.replyTo === undefined;
  }

  async error(code: string, message: string): Promise<void> {
    await this.reply({ type: 'error', error: { code, message } });
  }

  async completed(outcome: CompletionOutcome, runtimeMs: number): Promise<void> {
    const payload = this.completionPayload(outcome, runtimeMs);
    if (!payload) return;
    await this.bus.publish(
      {
        exchange: this.names.exchanges.events,
        routingKey: this.names.routingKeys.inferenceCompleted,
      },
      makeEnvelope('inference.completed', payload as InferenceCompletedPayload),
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
      | { action: 'settle'; usage: TokenUsage; completed?: CompletionOutcome; runtimeMs?: number }
      | { action: 'void' | 'refund' },
  ): Promise<void> {
    const { job } = this;
    const completed =
      settlement.action === 'settle' && settlement.completed
        ? this.completionPayload(settlement.completed, settlement.runtimeMs ?? 0)
        : undefined;
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

  /** The job's completion event (webhook jobs only); without a cost when it is not known yet. */
  private completionPayload(
    outcome: CompletionOutcome,
    runtimeMs: number,
  ): Record<string, unknown> | undefined {
    const { job } = this;
    if (!job.webhookUrl) return undefined;
    const common = {
      jobId: job.jobId,
      ...(job.requestId === undefined ? {} : { requestId: job.requestId }),
      accountId: job.accountId,
      model: job.model,
      webhookUrl: job.webhookUrl,
      ...(job.webhookFormat ? { webhookFormat: job.webhookFormat } : {}),
      runtimeMs: Math.max(0, Math.round(runtimeMs)),
      completedAtMs: Date.now(),
    };
    if (outcome.status === 'failed') return failedCompletion(common);
    return {
      ...common,
      status: 'succeeded',
      usage: outcome.usage,
      ...(outcome.costMicroDzd === undefined
        ? {}
        : { costMicroDzd: microDzdToWire(outcome.costMicroDzd) }),
      ...(outcome.embeddings
        ? { embeddings: outcome.embeddings }
        : { results: outcome.results ?? [] }),
    };
  }

  private async reply(fields: Omit<InferenceReplyPayload, 'jobId' | 'seq'>): Promise<boolean> {
    const replyTo = this.job.replyTo;
    if (!replyTo) return false;
    const { jobId } = this.job;
    const payload = { jobId, attemptId: this.attemptId, seq: this.seq, ...fields };
    this.seq += 1;
    try {
      await this.bus.publish(
        { queue: replyTo },
        makeEnvelope('inference.reply', payload as InferenceReplyPayload),
        {
          correlationId: this.job.jobId,
        },
      );
      return true;
    } catch (error) {
      // Gone (unroutable), or a `replyTo` this worker's broker user may not send to (forbidden:
      // not a reply queue): either way undeliverable, never worth running the job again.
      if (
        error instanceof BusError &&
        (error.code === 'unroutable' || error.code === 'forbidden')
      ) {
        return false;
      }
      throw error;
    }
  }
}
