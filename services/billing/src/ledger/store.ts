/**
 * The ledger store's row and outcome types. The store itself is `LedgerStore` (prisma-store.ts:
 * Prisma for the operator/finance paths, `pg-hot-path.ts`'s prepared statements for settle,
 * void and getHold).
 *
 * Lock order, everywhere: hold row → account_balances row(s) (by account id) → scoped_tokens
 * row(s) (by token id). Following it keeps concurrent settles, voids, holds and sweeps free of
 * deadlocks.
 */
import type { VoidOutcomeReason } from '@gateway/contracts';
import type { EntryCursor } from './cursor.js';
import type { Leg } from './ledger-accounts.js';
import type { Balance, LedgerHold, TransactionKind } from './types.js';

export interface NewJournalTransaction {
  id: string;
  kind: TransactionKind;
  accountId: string;
  reference: string | null;
  holdId: string | null;
  createdAt: Date;
  legs: readonly Leg[];
}

export interface IdempotencyClaimInput {
  scope: string;
  key: string;
  requestHash: string;
  now: Date;
  expiresAt: Date;
  /** The hold the claiming request places (edge requests that place one). */
  holdId?: string;
}

export interface StoredCreditResponse {
  requestHash: string;
  responseBody: unknown;
}

export interface ExpiredHold {
  id: string;
  accountId: string;
  scopedTokenId: string | null;
  amountMicroDzd: bigint;
}

export interface EntryFilter {
  accountId?: string;
  ledgerAccount?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to: Date;
  after?: EntryCursor;
  limit: number;
}

/** One settlement to apply: the id of its journal transaction is chosen by the caller. */
export interface SettleInput extends RunReport {
  holdId: string;
  inputTokens: bigint;
  outputTokens: bigint;
  transactionId: string;
  /** For the usage record only. */
  reasoningTokens?: bigint;
  cancelled?: boolean;
}

/** What the worker knows of a job's run, kept in its usage record (never priced). */
export interface RunReport {
  /** When the worker picked the job (queue latency = this − the hold's creation). */
  startedAt?: Date;
  generationMs?: number;
}

/** A void's usage-record outcome (`failed` when not said) and run timings. */
export interface VoidReport extends RunReport {
  outcome?: VoidOutcomeReason;
}

/** What the store knows of a hold that was not (or not now) finalised by this call. */
export type HoldState = Pick<
  LedgerHold,
  'id' | 'accountId' | 'status' | 'amountMicroDzd' | 'settledAmountMicroDzd' | 'expiresAt'
> & { model: string | null; finalizedAt: Date | null };

/** A database error confined to one item of a batch (the others went through). */
export interface ItemFailure {
  outcome: 'error';
  sqlState: string;
  message: string;
}

export type SettleOutcome =
  | { outcome: 'not_found' }
  | {
      outcome: 'settled' | 'replayed';
      hold: HoldState;
      costMicroDzd: bigint;
      transactionId: string;
      balance: Balance | null;
    }
  | { outcome: 'conflict' | 'unpriced'; hold: HoldState }
  | ItemFailure;

export type VoidOutcome =
  | { outcome: 'not_found' }
  | { outcome: 'voided' | 'replayed'; hold: HoldState; balance: Balance | null }
  | { outcome: 'conflict'; hold: HoldState };

export type RefundOutcome =
  | { outcome: 'not_found' }
  | {
      outcome: 'refunded' | 'replayed' | 'not_settled';
      refundedMicroDzd: bigint;
    };

/** Edge queued a hold's job: keep the hold until `expiresAt` (the job's end + settlement). */
export interface PublishMark {
  holdId: string;
  expiresAt: Date;
}
