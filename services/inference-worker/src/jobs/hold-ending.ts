import type { TokenUsage } from '../backends/index.js';
import { BillingUnavailable, type BillingClient } from '../billing/billing-client.js';
import type { SettleOutcome } from '../billing/types.js';
import type { CompletionOutcome, JobOutbox } from './outbox.js';

/** The settlement went to billing's queue: applied when billing is back; cost not known yet. */
export type DurableSettleOutcome = SettleOutcome | { kind: 'queued' };

/**
 * Settles the job's hold over HTTP (the fast path). When billing does not answer (after the
 * client's retries) the settlement is queued instead (docs/job-protocol.md §5): the answer
 * exists, so the model must not run again and the charge must not be lost. An async job's
 * success event goes with it, for billing to publish with the cost.
 */
export async function settleDurably(
  billing: BillingClient,
  outbox: JobOutbox,
  usage: TokenUsage,
  queued: { completed?: CompletionOutcome; runtimeMs?: number } = {},
): Promise<DurableSettleOutcome> {
  try {
    return await billing.settle(outbox.job.holdId, billed(usage));
  } catch (error) {
    if (!(error instanceof BillingUnavailable)) throw error;
    await outbox.queueSettlement({ action: 'settle', usage, ...queued });
    return { kind: 'queued' };
  }
}

/** Voids the job's hold; queued like a settlement when billing does not answer. */
export async function voidDurably(billing: BillingClient, outbox: JobOutbox): Promise<void> {
  try {
    await billing.void(outbox.job.holdId);
  } catch (error) {
    if (!(error instanceof BillingUnavailable)) throw error;
    await outbox.queueSettlement({ action: 'void' });
  }
}

const billed = (usage: TokenUsage) => ({
  inputTokens: usage.promptTokens,
  outputTokens: usage.completionTokens,
});
