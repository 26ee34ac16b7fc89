import type { TokenUsage } from '../backends/index.js';
import { BillingUnavailable, type BillingClient } from '../billing/billing-client.js';
import { billed } from '../billing/billed-usage.js';
import type { SettleOutcome } from '../billing/types.js';
import type { JobOutbox } from './outbox.js';
import { costMicroDzd, microDzdFromWire } from '@gateway/contracts';
import type { InferenceJobPayload, SettleRequest, VoidRequest } from '@gateway/contracts';

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
 * What billing will charge when it applies a queued settlement (issue 22, item 9): the usage at
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
