/**
 * What a call of billing's hold-ending functions answers, in the callers' terms. Amounts are
 * integer micro-dinar (µDZD) as `bigint`; no float anywhere.
 */
import type { VoidOutcomeReason } from '@gateway/contracts';

export type HoldStatus = 'pending' | 'settled' | 'voided' | 'expired';

/** An account's balance as the call left it (its projection, `account_balances`). */
export interface Balance {
  /** Sum of the positive entries on `customer:<accountId>`. */
  postedCreditsMicroDzd: bigint;
  /** Sum of the negative entries on `customer:<accountId>`, as a positive number. */
  postedDebitsMicroDzd: bigint;
  /** Sum of the amounts of the account's `pending` holds. */
  pendingMicroDzd: bigint;
  /** Posted credits − posted debits (what the gateway owes the customer). */
  balanceMicroDzd: bigint;
  /** Balance − pending: what new holds may still reserve. Never below zero. */
  availableMicroDzd: bigint;
}

/** What the call knows of a hold it did not (or not now) finalise. */
export interface HoldState {
  id: string;
  accountId: string;
  status: HoldStatus;
  amountMicroDzd: bigint;
  /** Set iff status is `settled`: the cost charged. */
  settledAmountMicroDzd: bigint | null;
  expiresAt: Date;
  model: string | null;
  finalizedAt: Date | null;
}

/** What the worker knows of a job's run, kept in its usage record (never priced). */
export interface RunReport {
  /** When the worker picked the job (queue latency = this − the hold's creation). */
  startedAt?: Date;
  generationMs?: number;
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

/** A void's usage-record outcome (`failed` when not said) and run timings. */
export interface VoidReport extends RunReport {
  outcome?: VoidOutcomeReason;
}

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
