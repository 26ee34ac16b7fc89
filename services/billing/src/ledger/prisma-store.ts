/**
 * The ledger's store: Prisma for credits, the sweeper and finance (ledger-repository.ts), plain
 * `pg` prepared statements for void, refund and getHold (pg-hot-path.ts). The domain modules (holds, credits, statements, sweeper, refunds)
 * call it; `tx` is a Prisma transaction client. Settle and the publish mark do not pass here:
 * ledger-service.ts calls the hot path for them directly.
 */
import type { PrismaClient } from '../db/client.js';
import { isRetryable, mapDatabaseError } from './db-errors.js';
import { collectViolations } from './invariant-queries.js';
import * as idempotency from '../idempotency/idempotency-repository.js';
import * as repo from './ledger-repository.js';
import type { PgHotPath } from './pg-hot-path.js';
import type {
  EntryFilter,
  ExpiredHold,
  IdempotencyClaimInput,
  NewJournalTransaction,
  RefundOutcome,
  StoredCreditResponse,
  VoidOutcome,
  VoidReport,
} from './store.js';
import type { Balance, LedgerEntryView, LedgerHold, OpenHoldRecord } from './types.js';

/** The transaction handle of the ledger's store. */
export type LedgerTx = repo.Db;

const MAX_DEADLOCK_RETRIES = 3;

export interface LedgerStoreOptions {
  /** Wait for a pooled connection to start a transaction. */
  transactionMaxWaitMs: number;
  /** Upper bound of one ledger transaction. */
  transactionTimeoutMs: number;
}

export class LedgerStore {
  readonly #prisma: PrismaClient;
  readonly #hot: PgHotPath;
  readonly #maxWait: number;
  readonly #timeout: number;

  constructor(prisma: PrismaClient, hot: PgHotPath, options: LedgerStoreOptions) {
    this.#prisma = prisma;
    this.#hot = hot;
    this.#maxWait = options.transactionMaxWaitMs;
    this.#timeout = options.transactionTimeoutMs;
  }

  // --- transactions ---
  /** One READ COMMITTED transaction, retried on deadlock; database errors mapped. */
  async transaction<T>(work: (tx: LedgerTx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#prisma.$transaction(work, {
          maxWait: this.#maxWait,
          timeout: this.#timeout,
        });
      } catch (error) {
        if (attempt < MAX_DEADLOCK_RETRIES && isRetryable(error)) continue;
        throw mapDatabaseError(error);
      }
    }
  }

  /** One consistent read-only snapshot (REPEATABLE READ), for reports. */
  snapshot<T>(work: (tx: LedgerTx) => Promise<T>): Promise<T> {
    // A read-only transaction never fails at COMMIT (see the note in db/client.ts).
    return this.#prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`SET TRANSACTION READ ONLY`;
        return work(tx);
      },
      { maxWait: this.#maxWait, timeout: this.#timeout, isolationLevel: 'RepeatableRead' },
    );
  }

  // --- balances and tokens ---
  readBalance(accountId: string, tx?: LedgerTx): Promise<Balance | null> {
    return repo.readBalance(tx ?? this.#prisma, accountId);
  }

  accountExists(accountId: string, tx?: LedgerTx): Promise<boolean> {
    return repo.accountExists(tx ?? this.#prisma, accountId);
  }

  /** Adds to posted credits (creating the row); null when the account does not exist. */
  addPostedCredits(tx: LedgerTx, accountId: string, amount: bigint): Promise<Balance | null> {
    return repo.addPostedCredits(tx, accountId, amount);
  }

  // --- holds ---
  /** One prepared statement on the pool. */
  findHold(holdId: string): Promise<LedgerHold | null> {
    return this.#hot.findHold(holdId);
  }

  /** Voids one hold in ONE statement. */
  voidHold(holdId: string, at: Date, report?: VoidReport): Promise<VoidOutcome> {
    return this.#hot.voidHold(holdId, at, report);
  }

  /** Marks the hold's answer delivered (edge lost its reply's acknowledgement); ONE statement. */
  markAnswerDelivered(holdId: string, at: Date): Promise<{ refunded: boolean } | null> {
    return this.#hot.markAnswerDelivered(holdId, at);
  }

  answerDelivered(holdId: string): Promise<boolean> {
    return this.#hot.answerDelivered(holdId);
  }

  /** Refunds a settled hold whose answer was delivered to nobody, in ONE statement. */
  refundHold(holdId: string, transactionId: string, at: Date): Promise<RefundOutcome> {
    return this.#hot.refundHold(holdId, transactionId, at);
  }

  /** Up to `limit` of the account's pending holds, oldest first, in `tx`'s snapshot. */
  openHolds(tx: LedgerTx, accountId: string, limit: number): Promise<OpenHoldRecord[]> {
    return repo.selectOpenHolds(tx, accountId, limit);
  }

  // --- journal and credit idempotency ---
  /** The transaction row and ALL its legs in one statement (checked per statement). */
  insertJournalTransaction(tx: LedgerTx, txn: NewJournalTransaction): Promise<void> {
    return repo.insertJournalTransaction(tx, txn);
  }

  /** True when this transaction now owns (scope, key). */
  claimIdempotencyKey(tx: LedgerTx, claim: IdempotencyClaimInput): Promise<boolean> {
    return idempotency.claimIdempotencyKey(tx, claim);
  }

  readIdempotencyRecord(
    tx: LedgerTx,
    scope: string,
    key: string,
  ): Promise<StoredCreditResponse | null> {
    return idempotency.readIdempotencyRecord(tx, scope, key);
  }

  storeIdempotencyResponse(tx: LedgerTx, scope: string, key: string, body: unknown): Promise<void> {
    return idempotency.storeIdempotencyResponse(tx, scope, key, 200, body);
  }

  // --- sweeper ---
  /**
   * Locks up to `limit` pending holds past expiry, or unpublished and placed at or before
   * `unpublishedBefore`, skipping rows others have locked.
   */
  lockExpiredHolds(
    tx: LedgerTx,
    now: Date,
    limit: number,
    unpublishedBefore: Date,
  ): Promise<ExpiredHold[]> {
    return repo.lockExpiredHolds(tx, now, limit, unpublishedBefore);
  }

  /** Releases pending per account, then reserved per token (each locked in id order). */
  async releaseExpired(
    tx: LedgerTx,
    perAccount: ReadonlyMap<string, bigint>,
    perToken: ReadonlyMap<string, bigint>,
  ): Promise<void> {
    await repo.releasePending(tx, perAccount);
    await repo.releaseReserved(tx, perToken);
  }

  /** `now`: the sweep's; a hold still before its expiry then was released by the grace. */
  markHoldsExpired(tx: LedgerTx, ids: readonly string[], at: Date, now: Date): Promise<number> {
    return repo.markHoldsExpired(tx, ids, at, now);
  }

  // --- finance ---
  /** Entries in (created_at, id) order. */
  selectEntries(filter: EntryFilter, tx?: LedgerTx): Promise<LedgerEntryView[]> {
    return repo.selectEntries(tx ?? this.#prisma, filter);
  }

  /** Posted balance of `customer:<accountId>` before `before` (exclusive). */
  postedBalanceBefore(tx: LedgerTx, accountId: string, before: Date): Promise<bigint> {
    return repo.postedBalanceBefore(tx, accountId, before);
  }

  /** The invariant check's violations, one line each (run it in a snapshot). */
  collectViolations(tx: LedgerTx): Promise<string[]> {
    return collectViolations(tx);
  }
}
