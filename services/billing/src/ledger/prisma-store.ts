/**
 * The ledger's store: Prisma for admission's hold placement, credits, the sweeper and finance
 * (ledger-repository.ts), plain `pg` prepared statements for settle, void and getHold
 * (pg-hot-path.ts). The one place the ledger touches Prisma and `pg` types.
 */
import type pg from 'pg';
import type { PrismaClient } from '../db/client.js';
import { isRetryable, mapDatabaseError } from './db-errors.js';
import { collectViolations } from './invariant-queries.js';
import * as repo from './ledger-repository.js';
import { PgHotPath } from './pg-hot-path.js';
import type { LedgerStore } from './store.js';

export type PrismaLedgerTx = repo.Db;

const MAX_DEADLOCK_RETRIES = 3;

export interface PrismaLedgerStoreOptions {
  /** Wait for a pooled connection to start a transaction. */
  transactionMaxWaitMs: number;
  /** Upper bound of one ledger transaction. */
  transactionTimeoutMs: number;
}

export function createPrismaLedgerStore(
  prisma: PrismaClient,
  pool: pg.Pool,
  options: PrismaLedgerStoreOptions,
): LedgerStore<PrismaLedgerTx> {
  const maxWait = options.transactionMaxWaitMs;
  const timeout = options.transactionTimeoutMs;
  const hot = new PgHotPath(pool);

  return {
    async transaction(work) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await prisma.$transaction(work, { maxWait, timeout });
        } catch (error) {
          if (attempt < MAX_DEADLOCK_RETRIES && isRetryable(error)) continue;
          throw mapDatabaseError(error);
        }
      }
    },
    // A read-only transaction never fails at COMMIT (see the note in db/client.ts).
    snapshot: (work) =>
      prisma.$transaction(
        async (tx) => {
          await tx.$executeRaw`SET TRANSACTION READ ONLY`;
          return work(tx);
        },
        { maxWait, timeout, isolationLevel: 'RepeatableRead' },
      ),
    readBalance: (accountId, tx) => repo.readBalance(tx ?? prisma, accountId),
    lockBalance: repo.lockBalance,
    accountExists: (accountId, tx) => repo.accountExists(tx ?? prisma, accountId),
    addPostedCredits: repo.addPostedCredits,
    lockScopedToken: repo.lockScopedToken,
    findHold: (holdId, tx) => (tx ? repo.findHold(tx, holdId) : hot.findHold(holdId)),
    catalogPrices: repo.catalogPrices,
    insertHoldAndReserve: repo.insertHoldAndReserve,
    settleHolds: (requests, at) => hot.settleHolds(requests, at),
    voidHold: (holdId, at, report) => hot.voidHold(holdId, at, report),
    refundHold: (holdId, transactionId, at) => hot.refundHold(holdId, transactionId, at),
    insertJournalTransaction: repo.insertJournalTransaction,
    claimIdempotencyKey: repo.claimIdempotencyKey,
    readIdempotencyRecord: repo.readIdempotencyRecord,
    storeIdempotencyResponse: (tx, scope, key, body) =>
      repo.storeIdempotencyResponse(tx, scope, key, 200, body),
    lockExpiredHolds: repo.lockExpiredHolds,
    markHoldsPublished: (marks, at) => hot.markHoldsPublished(marks, at),
    async releaseExpired(tx, perAccount, perToken) {
      await repo.releasePending(tx, perAccount);
      await repo.releaseReserved(tx, perToken);
    },
    markHoldsExpired: repo.markHoldsExpired,
    selectEntries: (filter, tx) => repo.selectEntries(tx ?? prisma, filter),
    postedBalanceBefore: repo.postedBalanceBefore,
    collectViolations: (tx) => collectViolations(tx),
  };
}
