import {
  createBillingClient as createSharedClient,
  type BillingClient as SharedBillingClient,
  type BillingClientOptions,
} from '@gateway/billing-client';
import {
  GatewayError,
  type CatalogEntry,
  type NodeHealthReport,
  type SettleRequest,
  type VoidRequest,
} from '@gateway/contracts';
import type { SettleOutcome, VoidOutcome } from '@gateway/billing-client';
import type { TokenUsage } from '../backends/context.js';
import type { LedgerHoldEnds } from './ledger-hold-ends.js';

/**
 * What the worker asks of billing, over the one shared client (@gateway/billing-client): the
 * catalog entry of a job's model and the end of its hold; with `ledger`, holds end in billing's
 * database directly (ADR 0070). Billing (or its database) unreachable or failing, after the
 * retries, is `BillingUnavailable`: an infrastructure fault, so the job is retried later rather
 * than failed, and a settlement is queued for billing; a refusal billing decided is its
 * GatewayError.
 */
export interface BillingClient {
  /** The entry, fetched again only when the cached one is older than `atLeastUpdatedAt`. */
  getModel(modelId: string, atLeastUpdatedAt?: string): Promise<CatalogEntry>;
  /** `usage` may carry what the usage record keeps (timings, a cancellation). */
  settle(holdId: string, usage: SettleRequest): Promise<SettleOutcome>;
  void(holdId: string, usage?: VoidRequest): Promise<VoidOutcome>;
  /** Gives a settled hold's charge back: its answer reached nobody (idempotent). */
  refund(holdId: string): Promise<RefundOutcome>;
  /** Whether the hold is still pending (a redelivered job checks before calling a model). */
  holdStatus(holdId: string): Promise<'pending' | 'settled' | 'voided' | 'expired'>;
  /** What this worker observed of its model nodes. */
  reportNodeHealth(report: NodeHealthReport): Promise<void>;
  close(): Promise<void>;
}

/** Billing's answer to a refund (`not_settled`: the hold charged nothing). */
export type RefundOutcome = Awaited<ReturnType<SharedBillingClient['refund']>>;

export class BillingUnavailable extends Error {
  override readonly name = 'BillingUnavailable';
}

export type WorkerBillingOptions = BillingClientOptions;

export function createBillingClient(
  options: WorkerBillingOptions,
  ledger?: LedgerHoldEnds,
): BillingClient {
  // Settlement must survive a billing blip: 5xx answers are retried too.
  const client = createSharedClient({ retryServerErrors: true, ...options });
  const holdEnds = ledger ?? client;
  return {
    getModel: (modelId, atLeastUpdatedAt) =>
      infrastructure('catalog', () => client.getModel(modelId, atLeastUpdatedAt)),
    settle: (holdId, usage) => infrastructure('settle', () => holdEnds.settle(holdId, usage)),
    void: (holdId, usage) => infrastructure('void', () => holdEnds.void(holdId, usage)),
    refund: (holdId) => infrastructure('refund', () => client.refund(holdId)),
    holdStatus: (holdId) => infrastructure('hold status', () => client.holdStatus(holdId)),
    reportNodeHealth: (report) => client.reportNodeHealth(report),
    close: async () => {
      await Promise.all([client.close(), ledger?.close()]);
    },
  };
}

async function infrastructure<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GatewayError && error.status < 500) throw error;
    throw new BillingUnavailable(`billing ${what}: ${(error as Error).message}`, { cause: error });
  }
}

/** The usage in billing's terms (settle requests and queued settlements). */
export const billed = (usage: TokenUsage) => ({
  inputTokens: usage.promptTokens,
  outputTokens: usage.completionTokens,
});
