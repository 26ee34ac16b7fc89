/**
 * The `LedgerService` the rest of billing uses (built by service.ts, billing's one composition
 * root), from the domain modules (holds, credits, statements, sweeper) over the ledger's store
 * (prisma-store.ts). Rules for finance: the top of services/billing/README.md.
 *
 * Concurrency: READ COMMITTED with explicit row locks (lock order: store.ts); no SERIALIZABLE
 * and no deferred constraints (an error raised at COMMIT leaks the pooled connection in Prisma
 * 6.19). Settle and void are one statement each; settlements that queue up while one runs are
 * applied together in one statement (NaturalBatcher, @gateway/runtime). Settle and the publish mark go straight
 * to the hot path's prepared statements (pg-hot-path.ts), not through the store.
 */
import { GatewayError } from '@gateway/contracts';
import { NaturalBatcher } from '@gateway/runtime';
import type pg from 'pg';
import { pgPoolOf, type PrismaClient } from '../db/client.js';
import { creditWith } from './credits.js';
import { holdNotFound, settleHoldWith, voidHoldWith, ZERO_BALANCE } from './holds.js';
import { PgHotPath } from './pg-hot-path.js';
import { LedgerStore, type LedgerTx } from './prisma-store.js';
import { listEntriesWith, statementToCsv, statementWith } from './statements.js';
import type { PublishMark, SettleOutcome, SettleInput } from './store.js';
import { refundHoldWith } from './refunds.js';
import { expireHoldsWith, startSweeperWith, type SweeperOptions } from './sweeper.js';
import type {
  Balance,
  OpenHolds,
  CreditInput,
  LedgerCredit,
  EntryPage,
  InvariantReport,
  LedgerHold,
  ListEntriesQuery,
  RefundResult,
  SettleResult,
  LedgerStatement,
  Usage,
  VoidResult,
  VoidUsage,
} from './types.js';
import { requireDate, requireId } from './validation.js';

export { CREDIT_IDEMPOTENCY_SCOPE } from './credits.js';
export { MAX_ENTRIES_PAGE, STATEMENT_CSV_HEADER, statementToCsv } from './statements.js';
export type { SweeperOptions } from './sweeper.js';

export interface LedgerServiceDeps {
  prisma: PrismaClient;
  /**
   * The `pg` pool of settle, void and getHold (prepared statements, no ORM). Defaults to the
   * pool under `prisma` (createPrismaClient), so both share one connection bound.
   */
  pool?: pg.Pool;
  clock: () => Date;
  /** Wait for a pooled connection to start a transaction; 10 s by default. */
  transactionMaxWaitMs?: number;
  /** Upper bound of one ledger transaction; 15 s by default. */
  transactionTimeoutMs?: number;
  /** Holds expired per sweeper transaction; 500 by default. */
  sweepBatchSize?: number;
  /**
   * A hold not marked published this long after it was placed is released (its job was never
   * queued). Unset: only the TTL expires holds (callers that never mark holds published).
   */
  holdPublishGraceMs?: number;
  /** How long an Idempotency-Key is remembered; 24 h by default. */
  idempotencyTtlMs?: number;
  /**
   * listEntries only lists entries older than now − this, so that paging never skips an entry
   * committed late. Must exceed the longest ledger transaction plus clock skew between
   * replicas; transactionTimeoutMs + 15 s by default.
   */
  entriesStableAfterMs?: number;
  /** A statement longer than this is refused (ask for a shorter period); 100 000 by default. */
  statementMaxLines?: number;
  /** Settlements applied together at most (one statement); 64 by default. */
  settleBatchMaxSize?: number;
  /** Settle statements running at once; more settlements wait and are batched. 2 by default. */
  settleBatchMaxInFlight?: number;
  /**
   * Counts the µDZD each settlement charged (a replay adds nothing): the service's
   * `billing_settled_micro_dzd_total` (metrics.ts). Not counted when omitted.
   */
  settledMicroDzd?: { inc(value: number): void };
}

export interface LedgerService {
  credit(input: CreditInput): Promise<LedgerCredit>;
  settleHold(holdId: string, usage: Usage): Promise<SettleResult>;
  /** `usage`: the usage record's outcome (failed by default) and the run's timings. */
  voidHold(holdId: string, usage?: VoidUsage): Promise<VoidResult>;
  /** Gives a settled hold's charge back: its answer was delivered to nobody (refunds.ts). */
  refundHold(holdId: string): Promise<RefundResult>;
  getHold(holdId: string): Promise<LedgerHold | null>;
  /**
   * Edge handed this hold's answer to its request, but the acknowledgement of the reply was
   * lost with its channel: the broker gave the reply back, and an unread copy of it must not be
   * refunded (ADR 0068). `refunded`: such a refund happened first. 404 for an unknown hold.
   */
  markAnswerDelivered(holdId: string): Promise<{ refunded: boolean }>;
  /** Whether edge marked this hold's answer delivered. */
  answerDelivered(holdId: string): Promise<boolean>;
  /**
   * Edge published these holds' jobs: the sweeper no longer releases them after the publish
   * grace, and each lasts at least until its `expiresAt` (the job's end + settlement time). One
   * statement; returns the ids marked (a hold already final is not).
   */
  markHoldsPublished(marks: readonly PublishMark[]): Promise<Set<string>>;
  /**
   * Expires pending holds whose expiry is at or before `now`, and releases unmarked holds past
   * their publish grace unless the caller has been awake less than the grace (`awakeForMs`,
   * unlimited by default; the sweeper passes its own); returns how many.
   */
  expireHolds(now: Date, awakeForMs?: number): Promise<number>;
  /** Runs expireHolds every intervalMs; returns stop(). (Idempotency records: service.ts.) */
  startSweeper(options: SweeperOptions): () => Promise<void>;
  getBalance(accountId: string): Promise<Balance>;
  /** The account's open holds, oldest first, at most `limit`, and its reserved total. */
  openHolds(accountId: string, limit: number): Promise<OpenHolds>;
  listEntries(query?: ListEntriesQuery): Promise<EntryPage>;
  statement(accountId: string, range: { from: Date; to: Date }): Promise<LedgerStatement>;
  statementCsv(accountId: string, range: { from: Date; to: Date }): Promise<string>;
  checkInvariants(): Promise<InvariantReport>;
}

export function createLedgerService(deps: LedgerServiceDeps): LedgerService {
  const { prisma, clock } = deps;
  const timeout = deps.transactionTimeoutMs ?? 15_000;
  const hot = new PgHotPath(deps.pool ?? pgPoolOf(prisma));
  const store = new LedgerStore(prisma, hot, {
    transactionMaxWaitMs: deps.transactionMaxWaitMs ?? 10_000,
    transactionTimeoutMs: timeout,
  });
  const statementDeps = {
    store,
    clock,
    stableAfterMs: deps.entriesStableAfterMs ?? timeout + 15_000,
    statementMaxLines: deps.statementMaxLines ?? 100_000,
  };
  const sweepDeps = {
    store,
    clock,
    batchSize: deps.sweepBatchSize ?? 500,
    publishGraceMs: deps.holdPublishGraceMs,
  };
  // Settlements that queue up while a statement runs are applied together in the next one.
  const settlements = new NaturalBatcher<SettleInput, SettleOutcome>(
    async (requests) =>
      (await hot.settleHolds(requests, clock())).map((value) => ({ ok: true, value })),
    {
      maxBatchSize: deps.settleBatchMaxSize ?? 64,
      maxInFlight: deps.settleBatchMaxInFlight ?? 2,
    },
  );
  const expireHolds = (now: Date, awakeForMs?: number) =>
    expireHoldsWith(sweepDeps, now, awakeForMs);
  const markHoldsPublished = (marks: readonly PublishMark[]) =>
    hot.markHoldsPublished(
      marks.map((mark) => ({
        holdId: requireId('holdId', mark.holdId),
        expiresAt: requireDate('expiresAt', mark.expiresAt),
      })),
      clock(),
    );
  const statement = (accountId: string, range: { from: Date; to: Date }) =>
    statementWith(statementDeps, accountId, range);

  return {
    credit: (input) =>
      creditWith({ store, clock, idempotencyTtlMs: deps.idempotencyTtlMs ?? 86_400_000 }, input),
    async settleHold(holdId, usage) {
      const result = await settleHoldWith((request) => settlements.submit(request), holdId, usage);
      // A double counts µDZD exactly up to 2^53 (≈ 9 billion DZD) per process lifetime.
      if (!result.replayed) deps.settledMicroDzd?.inc(Number(result.costMicroDzd));
      return result;
    },
    voidHold: (holdId, usage) => voidHoldWith(store, holdId, clock, usage),
    refundHold: (holdId) => refundHoldWith(store, holdId, clock),
    getHold: (holdId) => store.findHold(requireId('holdId', holdId)),
    async markAnswerDelivered(holdId) {
      const marked = await store.markAnswerDelivered(requireId('holdId', holdId), clock());
      if (!marked) throw holdNotFound(holdId);
      return marked;
    },
    answerDelivered: (holdId) => store.answerDelivered(requireId('holdId', holdId)),
    markHoldsPublished,
    expireHolds,
    startSweeper: (options) => startSweeperWith(expireHolds, clock, options),
    getBalance: (accountId) => accountBalance(store, requireId('accountId', accountId)),
    openHolds: (accountId, limit) => openHoldsWith(store, requireId('accountId', accountId), limit),
    listEntries: (query) => listEntriesWith(statementDeps, query),
    statement,
    statementCsv: async (accountId, range) => statementToCsv(await statement(accountId, range)),
    async checkInvariants() {
      const violations = await store.snapshot((tx) => store.collectViolations(tx));
      return { ok: violations.length === 0, violations };
    },
  };
}

/** The account's balance (zero before its first credit); 404 for an unknown account. */
async function accountBalance(
  store: LedgerStore,
  accountId: string,
  tx?: LedgerTx,
): Promise<Balance> {
  const balance = await store.readBalance(accountId, tx);
  if (balance) return balance;
  if (await store.accountExists(accountId, tx)) return ZERO_BALANCE;
  throw new GatewayError('resource_not_found', `Account ${accountId} does not exist.`);
}

/** One snapshot: the holds and the reserved total agree (404 for an unknown account). */
function openHoldsWith(store: LedgerStore, accountId: string, limit: number): Promise<OpenHolds> {
  return store.snapshot(async (tx) => {
    const balance = await accountBalance(store, accountId, tx);
    const holds = await store.openHolds(tx, accountId, limit + 1);
    return {
      holds: holds.slice(0, limit),
      hasMore: holds.length > limit,
      reservedMicroDzd: balance.pendingMicroDzd,
    };
  });
}
