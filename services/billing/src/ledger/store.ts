/**
 * The ledger store's row and outcome types. The store itself is `LedgerStore` (prisma-store.ts:
 * Prisma for the operator/finance paths, `pg-hot-path.ts`'s prepared statements for settle,
 * void and getHold).
 *
 * Lock order, everywhere: hold row → account_balances row(s) (by account id) → scoped_tokens
 * row(s) (by token id). Following it keeps concurrent settles, voids, holds and sweeps free of
 * deadlocks.
 */
import type { EntryCursor } from './cursor.js';
import type { Leg } from './ledger-accounts.js';
import type { TransactionKind } from './types.js';

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

// The hold-ending calls' inputs and outcomes are shared with the worker (ADR 0070).
export type {
  HoldState,
  ItemFailure,
  RunReport,
  SettleInput,
  SettleOutcome,
  VoidOutcome,
  VoidReport,
} from '@gateway/ledger-calls';

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
