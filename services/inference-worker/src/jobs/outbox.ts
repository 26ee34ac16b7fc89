import { randomUUID } from 'node:crypto';
import {
  makeEnvelope,
  microDzdToWire,
  type InferenceCompletedPayload,
  type InferenceJobPayload,
  type InferenceReplyPayload,
} from '@gateway/contracts';
import { BusError, type GatewayNames, type MessageBus } from '@gateway/messaging';
import type { TokenUsage } from '../backends/index.js';

/** Fixed text: clients must not branch on it (spec, Events). */
export const INFERENCE_FAILED_MESSAGE = 'Inference failed.';

export interface FinalReply {
  usage: TokenUsage;
  costMicroDzd: bigint;
  balanceMicroDzd: bigint;
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

  async final(reply: FinalReply): Promise<void> {
    const { usage } = reply;
    await this.reply({
      type: 'final',
      data: reply.data,
      usage: { ...usage, totalTokens: usage.promptTokens + usage.completionTokens },
      costMicroDzd: microDzdToWire(reply.costMicroDzd),
      balanceMicroDzd: microDzdToWire(reply.balanceMicroDzd < 0n ? 0n : reply.balanceMicroDzd),
      ...(reply.warnings.length > 0 ? { warnings: reply.warnings } : {}),
    });
  }

  async error(code: string, message: string): Promise<void> {
    await this.reply({ type: 'error', error: { code, message } });
  }

  async completed(
    outcome:
      | {
          status: 'succeeded';
          usage: TokenUsage;
          costMicroDzd: bigint;
          results?: { generated_text: string }[];
          embeddings?: number[][];
        }
      | { status: 'failed' },
    runtimeMs: number,
  ): Promise<void> {
    const { job } = this;
    if (!job.webhookUrl) return;
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
    const payload: InferenceCompletedPayload =
      outcome.status === 'succeeded'
        ? {
            ...common,
            status: 'succeeded',
            usage: outcome.usage,
            costMicroDzd: microDzdToWire(outcome.costMicroDzd),
            ...(outcome.embeddings
              ? { embeddings: outcome.embeddings }
              : { results: outcome.results ?? [] }),
          }
        : {
            ...common,
            status: 'failed',
            usage: { promptTokens: 0, completionTokens: 0 },
            costMicroDzd: null,
            error: { type: 'inference_failed', message: INFERENCE_FAILED_MESSAGE },
          };
    await this.bus.publish(
      {
        exchange: this.names.exchanges.events,
        routingKey: this.names.routingKeys.inferenceCompleted,
      },
      makeEnvelope('inference.completed', payload),
      { correlationId: job.jobId },
    );
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
      if (error instanceof BusError && error.code === 'unroutable') return false;
      throw error;
    }
  }
}
