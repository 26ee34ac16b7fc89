/**
 * Public types of the ledger domain. Amounts are integer micro-dinar (µDZD) as `bigint`;
 * conversion to DZD happens only at the JSON edges (`microDzdToDzd` in @gateway/contracts).
 */
import type { Balance, HoldStatus } from '@gateway/ledger-calls';

// A hold's status and an account's balance are what the hold-ending calls answer (ADR 0070).
export type { Balance, HoldStatus };

export type TransactionKind = 'credit' | 'hold_settlement' | 'reversal' | 'adjustment';

export interface CreditInput {
  accountId: string;
  /** > 0. */
  amountMicroDzd: bigint;
  /** Free text for finance (payment reference, invoice number); null when none. */
  reference: string | null;
  /**
   * The `Idempotency-Key`: the same key with the same body returns the first result; with a
   * different body, `idempotency_key_conflict`. Kept 24 h. Without a key, every call credits.
   */
  idempotencyKey?: string | null;
}

export interface LedgerCredit {
  transactionId: string;
  /** The balance right after this credit (a replay returns the first answer unchanged). */
  balance: Balance;
}

export interface LedgerHold {
  id: string;
  accountId: string;
  scopedTokenId: string | null;
  amountMicroDzd: bigint;
  status: HoldStatus;
  /** Set iff status is `settled`: the cost charged, ≤ amount. */
  settledAmountMicroDzd: bigint | null;
  model: string;
  priority: boolean;
  expiresAt: Date;
  createdAt: Date;
  /** When the hold left `pending`. */
  finalizedAt: Date | null;
}

/** A pending hold as an operator sees it: what is reserved, for what, since when. */
export interface OpenHoldRecord {
  id: string;
  model: string;
  amountMicroDzd: bigint;
  priority: boolean;
  scopedTokenId: string | null;
  publishedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

/** An account's open holds, oldest first, up to a limit; `reservedMicroDzd` counts them all. */
export interface OpenHolds {
  holds: OpenHoldRecord[];
  hasMore: boolean;
  reservedMicroDzd: bigint;
}

export type { HoldConflictResult } from '@gateway/ledger-calls';

// What a settlement or a void reports, as billing's API and the worker state it (ADR 0070).
export type { HoldUsage as Usage, HoldVoidUsage as VoidUsage } from '@gateway/ledger-calls';

export interface SettleResult {
  holdId: string;
  status: 'settled';
  /** Charged: cost of the usage at the model's prices, capped at the held amount. */
  costMicroDzd: bigint;
  /** Held amount − cost, released back to the available balance. */
  releasedMicroDzd: bigint;
  /** The `hold_settlement` journal transaction. */
  transactionId: string;
  /** The account's balance now (on a repeat: the current one, not the one at settlement). */
  balance: Balance;
  /** True when the hold had already been settled: nothing moved this time. */
  replayed: boolean;
}

export interface VoidResult {
  holdId: string;
  /** `expired` when the sweeper got there first (voiding an expired hold is a no-op). */
  status: 'voided' | 'expired';
  releasedMicroDzd: bigint;
  balance: Balance;
  /** True when the hold was already voided or expired: nothing moved this time. */
  replayed: boolean;
}

/** A settled hold whose answer was delivered to nobody: its charge is given back, once. */
export interface RefundResult {
  holdId: string;
  /** `not_settled`: the hold is pending, voided or expired — nothing was charged, nothing moved. */
  status: 'refunded' | 'not_settled';
  /** What the refund gave back (the settled cost); 0 when not settled. */
  refundedMicroDzd: bigint;
  /** True when the hold was already refunded: nothing moved this time. */
  replayed: boolean;
}

export interface LedgerEntryView {
  id: bigint;
  transactionId: string;
  kind: TransactionKind;
  ledgerAccount: string;
  accountId: string | null;
  /** Signed: credit positive, debit negative. */
  amountMicroDzd: bigint;
  reference: string | null;
  holdId: string | null;
  createdAt: Date;
}

export interface ListEntriesQuery {
  /** Only the entries of `customer:<accountId>`. */
  accountId?: string;
  /** Only the entries of this ledger account (e.g. `system:revenue`). */
  ledgerAccount?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive; clamped to the stable horizon (see EntryPage.through). */
  to?: Date;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** 1..500, default 100. */
  limit?: number;
}

export interface EntryPage {
  /** Ordered by (createdAt, id). */
  entries: LedgerEntryView[];
  /** Pass back as `cursor` for the next page; null when this page is the last one so far. */
  nextCursor: string | null;
  /**
   * Entries are listed only up to this instant (exclusive): now − the stability window. Older
   * entries can no longer appear (every transaction that could still add one has committed or
   * rolled back), so paging with the cursor never skips an entry.
   */
  through: Date;
}

export interface LedgerStatementLine {
  entryId: bigint;
  transactionId: string;
  kind: TransactionKind;
  reference: string | null;
  holdId: string | null;
  createdAt: Date;
  /** Signed: credit positive, debit negative. */
  amountMicroDzd: bigint;
  /** Running balance after this line. */
  balanceAfterMicroDzd: bigint;
}

export interface LedgerStatement {
  accountId: string;
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  /** Posted balance at `from` (sum of all earlier entries). */
  openingBalanceMicroDzd: bigint;
  totalCreditsMicroDzd: bigint;
  /** Positive number. */
  totalDebitsMicroDzd: bigint;
  /** opening + credits − debits. */
  closingBalanceMicroDzd: bigint;
  lines: LedgerStatementLine[];
}

export interface InvariantReport {
  ok: boolean;
  violations: string[];
}
