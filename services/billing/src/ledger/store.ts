/**
 * The persistence port of the ledger. The domain modules (holds, credits, statements, sweeper,
 * invariants) depend on this interface only; `prisma-store.ts` implements it with Prisma for
 * admission and the operator/finance paths and `pg-hot-path.ts` (plain `pg`, prepared
 * statements) for settle, void and getHold. `Tx` is the store's transaction handle.
 *
 * Lock order, everywhere: hold row → account_balances row(s) (by account id) → scoped_tokens
 * row(s) (by token id). Following it keeps concurrent settles, voids, holds and sweeps free of
 * deadlocks; a caller that wraps placeHold in its own transaction must not lock a scoped_tokens
 * row before the balance row.
 */
import type { VoidOutcomeReason } from '@gateway/contracts';
import type { EntryCursor } from './cursor.js';
import type { Leg } from './ledger-accounts.js';
import type { Balance, HoldPrices, LedgerEntryView, LedgerHold, TransactionKind } from './types.js';

export interface TokenCounters {
  id: string;
  accountId: string;
  spendingLimitMicroDzd: bigint | null;
  spentMicroDzd: bigint;
  reservedMicroDzd: bigint;
}

export interface NewHold {
  id: string;
  accountId: string;
  scopedTokenId: string | null;
  amountMicroDzd: bigint;
  model: string;
  /** Snapshot of the model's prices the amount was computed with. */
  prices: HoldPrices | null;
  priority: boolean;
  expiresAt: Date;
  createdAt: Date;
}

export interface NewJournalTransaction {
  id: string;
  kind: TransactionKind;
  accountId: string;
  reference: string | null;
  holdId: string | null;
  createdAt: Date;
  legs: readonly Leg[];
}

export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
  now: Date;
  expiresAt: Date;
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
export interface SettleRequest extends RunReport {
  holdId: string;
  inputTokens: bigint;
  outputTokens: bigint;
  transactionId: string;
  /** For the usage record only (issue 16). */
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

export interface LedgerStore<Tx> {
  // --- transactions ---
  /** One READ COMMITTED transaction, retried on deadlock; database errors mapped. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** One consistent read-only snapshot (REPEATABLE READ), for reports. */
  snapshot<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;

  // --- balances and tokens ---
  readBalance(accountId: string, tx?: Tx): Promise<Balance | null>;
  /** Locks the account's balance row until the transaction ends; null when it has none. */
  lockBalance(tx: Tx, accountId: string): Promise<Balance | null>;
  accountExists(accountId: string, tx?: Tx): Promise<boolean>;
  /** Adds to posted credits (creating the row); null when the account does not exist. */
  addPostedCredits(tx: Tx, accountId: string, amount: bigint): Promise<Balance | null>;
  lockScopedToken(tx: Tx, tokenId: string): Promise<TokenCounters | null>;

  // --- holds ---
  findHold(holdId: string, tx?: Tx): Promise<LedgerHold | null>;
  catalogPrices(tx: Tx, model: string): Promise<HoldPrices | null>;
  /** Inserts a pending hold and reserves it; null when the id exists (nothing reserved). */
  insertHoldAndReserve(tx: Tx, hold: NewHold): Promise<LedgerHold | null>;
  /**
   * Settles holds in ONE statement and one transaction; one outcome per request, in order. A
   * request that fails does not fail the others (each runs in its own savepoint).
   */
  settleHolds(requests: readonly SettleRequest[], at: Date): Promise<SettleOutcome[]>;
  /** Voids one hold in ONE statement. */
  voidHold(holdId: string, at: Date, report?: VoidReport): Promise<VoidOutcome>;
  /** Refunds a settled hold whose answer was delivered to nobody, in ONE statement. */
  refundHold(holdId: string, transactionId: string, at: Date): Promise<RefundOutcome>;

  // --- journal and credit idempotency ---
  /** The transaction row and ALL its legs in one statement (checked per statement). */
  insertJournalTransaction(tx: Tx, txn: NewJournalTransaction): Promise<void>;
  /** True when this transaction now owns (scope, key). */
  claimIdempotencyKey(tx: Tx, claim: IdempotencyClaim): Promise<boolean>;
  readIdempotencyRecord(tx: Tx, scope: string, key: string): Promise<StoredCreditResponse | null>;
  storeIdempotencyResponse(tx: Tx, scope: string, key: string, body: unknown): Promise<void>;

  // --- sweeper ---
  /**
   * Locks up to `limit` pending holds past expiry, or unpublished and placed at or before
   * `unpublishedBefore`, skipping rows others have locked.
   */
  lockExpiredHolds(
    tx: Tx,
    now: Date,
    limit: number,
    unpublishedBefore: Date,
  ): Promise<ExpiredHold[]>;
  /** Marks pending holds published, each expiring at least at its `expiresAt`; ids marked. */
  markHoldsPublished(marks: readonly PublishMark[], at: Date): Promise<Set<string>>;
  /** Releases pending per account, then reserved per token (each locked in id order). */
  releaseExpired(
    tx: Tx,
    perAccount: ReadonlyMap<string, bigint>,
    perToken: ReadonlyMap<string, bigint>,
  ): Promise<void>;
  markHoldsExpired(tx: Tx, ids: readonly string[], at: Date): Promise<number>;

  // --- finance ---
  /** Entries in (created_at, id) order. */
  selectEntries(filter: EntryFilter, tx?: Tx): Promise<LedgerEntryView[]>;
  /** Posted balance of `customer:<accountId>` before `before` (exclusive). */
  postedBalanceBefore(tx: Tx, accountId: string, before: Date): Promise<bigint>;
  /** The invariant check's violations, one line each (run it in a snapshot). */
  collectViolations(tx: Tx): Promise<string[]>;
}

/** Edge queued a hold's job: keep the hold until `expiresAt` (the job's end + settlement). */
export interface PublishMark {
  holdId: string;
  expiresAt: Date;
}
