/**
 * The ledger domain: credits, holds (place → settle | void | expire), balances, finance
 * exports and the invariant check. Rules for finance: the top of services/billing/README.md.
 *
 * Concurrency: READ COMMITTED with explicit row locks (see the lock order in
 * ledger-repository.ts); no SERIALIZABLE and no deferred constraints (an error raised at COMMIT
 * leaks the pooled connection in Prisma 6.19). Constraint violations surface at the statement
 * that causes them and are mapped to GatewayErrors.
 */
import { createHash } from 'node:crypto';
import { GatewayError, costMicroDzd, formatDzd } from '@gateway/contracts';
import type { Prisma, PrismaClient } from '../db/client.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { csvField, csvRow, csvTextField } from './csv.js';
import { INSUFFICIENT_BALANCE_MESSAGE, isRetryable, mapDatabaseError } from './db-errors.js';
import { newId } from './ids.js';
import { collectViolations } from './invariant-queries.js';
import { assertBalanced, creditLegs, settlementLegs } from './ledger-accounts.js';
import * as repo from './ledger-repository.js';
import { microDzdToFixedDzd } from './money-format.js';
import type {
  Balance,
  CreditInput,
  CreditResult,
  EntryPage,
  HoldConflictResult,
  HoldPrices,
  InvariantReport,
  LedgerHold,
  ListEntriesQuery,
  PlacedHold,
  PlaceHoldInput,
  SettleResult,
  Statement,
  StatementLine,
  Usage,
  VoidResult,
} from './types.js';
import {
  requireAmount,
  requireDate,
  requireId,
  requireLimit,
  requireRange,
  requireReference,
  requireTokenCount,
} from './validation.js';

/** The client of an interactive transaction (`prisma.$transaction(async (tx) => …)`). */
export type LedgerTransactionClient = Prisma.TransactionClient;

export interface LedgerServiceDeps {
  prisma: PrismaClient;
  clock: () => Date;
  /** Lifetime of a hold; the sweeper expires pending holds past it. */
  holdTtlMs: number;
  /** Wait for a pooled connection to start a transaction; 10 s by default. */
  transactionMaxWaitMs?: number;
  /** Upper bound of one ledger transaction; 15 s by default. */
  transactionTimeoutMs?: number;
  /** Holds expired per sweeper transaction; 500 by default. */
  sweepBatchSize?: number;
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
}

export interface HoldOptions {
  clock: () => Date;
  holdTtlMs: number;
}

export interface SweeperOptions {
  intervalMs: number;
  /** Called after each sweep that expired at least one hold. */
  onExpired?: (count: number) => void;
  /** Called when a sweep fails; the sweeper keeps running. */
  onError?: (error: unknown) => void;
}

export interface LedgerService {
  credit(input: CreditInput): Promise<CreditResult>;
  /**
   * Reserves funds. Pass the Prisma client to run in a transaction of its own, or the client of
   * your own interactive transaction (it then commits or rolls back with yours).
   */
  placeHold(db: PrismaClient | LedgerTransactionClient, input: PlaceHoldInput): Promise<PlacedHold>;
  settleHold(holdId: string, usage: Usage): Promise<SettleResult>;
  voidHold(holdId: string): Promise<VoidResult>;
  getHold(holdId: string): Promise<LedgerHold | null>;
  /** Expires pending holds whose expiry is at or before `now`; returns how many. */
  expireHolds(now: Date): Promise<number>;
  /** Runs expireHolds every intervalMs; returns stop(). (Idempotency records: service.ts.) */
  startSweeper(options: SweeperOptions): () => Promise<void>;
  getBalance(accountId: string): Promise<Balance>;
  listEntries(query?: ListEntriesQuery): Promise<EntryPage>;
  statement(accountId: string, range: { from: Date; to: Date }): Promise<Statement>;
  statementCsv(accountId: string, range: { from: Date; to: Date }): Promise<string>;
  checkInvariants(): Promise<InvariantReport>;
}

export const CREDIT_IDEMPOTENCY_SCOPE = 'credit';
export const MAX_ENTRIES_PAGE = 500;
const DEFAULT_ENTRIES_PAGE = 100;
const MAX_DEADLOCK_RETRIES = 3;

// ------------------------------------------------------------------------------------- holds

function holdConflict(hold: LedgerHold, attempted: 'settle' | 'void'): GatewayError {
  const when = hold.finalizedAt ? ` at ${hold.finalizedAt.toISOString()}` : '';
  const [result, what]: [HoldConflictResult, string] =
    hold.status === 'settled'
      ? ['hold_settled', `was settled${when} for ${formatDzd(hold.settledAmountMicroDzd ?? 0n)}`]
      : hold.status === 'voided'
        ? ['hold_voided', `was voided${when}`]
        : ['hold_expired', `expired${when} (its expiry was ${hold.expiresAt.toISOString()})`];
  return new GatewayError(
    'conflict',
    `Hold ${hold.id} ${what}; it can no longer be ${attempted === 'settle' ? 'settled' : 'voided'}.`,
    { details: { result, holdId: hold.id, holdStatus: hold.status } },
  );
}

function sameHold(hold: LedgerHold, input: PlaceHoldInput): boolean {
  return (
    hold.accountId === input.accountId &&
    hold.amountMicroDzd === input.amountMicroDzd &&
    hold.model === input.model &&
    hold.priority === input.priority &&
    hold.scopedTokenId === (input.scopedToken?.id ?? null)
  );
}

function replayOrConflict(existing: LedgerHold, input: PlaceHoldInput): PlacedHold {
  if (sameHold(existing, input)) return { ...existing, replayed: true };
  const result: HoldConflictResult = 'hold_id_taken';
  throw new GatewayError(
    'conflict',
    `Hold ${existing.id} already exists with a different account, amount, model, tier or token.`,
    { details: { result, holdId: existing.id, holdStatus: existing.status } },
  );
}

function budgetExhausted(token: repo.TokenCounters, limit: bigint, amount: bigint): GatewayError {
  const spent = formatDzd(token.spentMicroDzd);
  const reserved =
    token.reservedMicroDzd > 0n
      ? `, ${formatDzd(token.reservedMicroDzd)} more is reserved by requests in progress`
      : '';
  const message =
    token.spentMicroDzd >= limit
      ? `Scoped token budget exhausted: spent ${spent} of its ${formatDzd(limit)} spending limit.`
      : `Scoped token spending limit reached: spent ${spent} of ${formatDzd(limit)}${reserved}, ` +
        `and this request may cost up to ${formatDzd(amount)}.`;
  return new GatewayError('budget_exhausted', message);
}

/**
 * placeHold inside a transaction the caller owns (e.g. the admit path: rate limit, checks and
 * hold in one transaction). Locks the balance row, then the scoped-token row; checks the
 * spending limit (`budget_exhausted`), then the available balance (`insufficient_balance`);
 * only then writes. A GatewayError thrown here leaves nothing written (only row locks), so the
 * caller may still commit; a database error aborts the caller's transaction.
 */
export async function placeHoldInTransaction(
  tx: LedgerTransactionClient,
  input: PlaceHoldInput,
  options: HoldOptions,
): Promise<PlacedHold> {
  const accountId = requireId('accountId', input.accountId);
  const holdId = input.holdId === undefined ? newId('hold') : requireId('holdId', input.holdId);
  const amount = requireAmount('amountMicroDzd', input.amountMicroDzd, 0n);
  const model = requireId('model', input.model);
  if (typeof input.priority !== 'boolean') {
    throw new GatewayError('invalid_request_body', 'priority must be a boolean', {
      param: 'priority',
    });
  }
  const tokenId = input.scopedToken ? requireId('scopedToken.id', input.scopedToken.id) : null;
  const ttlMs = input.ttlMs ?? options.holdTtlMs;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new GatewayError('invalid_request_body', 'ttlMs must be a positive integer', {
      param: 'ttlMs',
    });
  }

  const balance = await repo.lockBalance(tx, accountId);
  if (input.holdId !== undefined) {
    const existing = await repo.findHold(tx, holdId);
    if (existing) return replayOrConflict(existing, input);
  }
  if (tokenId !== null) {
    const token = await repo.lockScopedToken(tx, tokenId);
    if (!token || token.accountId !== accountId) {
      throw new GatewayError('resource_not_found', 'Scoped token is not registered.');
    }
    const limit = token.spendingLimitMicroDzd;
    if (
      limit !== null &&
      (token.spentMicroDzd >= limit ||
        token.spentMicroDzd + token.reservedMicroDzd + amount > limit)
    ) {
      throw budgetExhausted(token, limit, amount);
    }
  }
  if (!balance || balance.availableMicroDzd <= 0n || balance.availableMicroDzd < amount) {
    throw new GatewayError('insufficient_balance', INSUFFICIENT_BALANCE_MESSAGE);
  }
  const now = options.clock();
  const hold = await repo.insertHoldAndReserve(tx, {
    id: holdId,
    accountId,
    scopedTokenId: tokenId,
    amountMicroDzd: amount,
    model,
    prices: input.prices ? checkPrices(input.prices) : await repo.catalogPrices(tx, model),
    priority: input.priority,
    expiresAt: new Date(now.getTime() + ttlMs),
    createdAt: now,
  });
  if (hold) return { ...hold, replayed: false };
  // Same id placed concurrently for another account (ours would have waited on our lock).
  const existing = await repo.findHold(tx, holdId);
  if (!existing) throw new Error(`hold ${holdId}: insert conflicted but the hold is missing`);
  return replayOrConflict(existing, input);
}

function checkPrices(prices: HoldPrices): HoldPrices {
  return {
    inputMicroDzdPerM: requireAmount('prices.inputMicroDzdPerM', prices.inputMicroDzdPerM, 0n),
    outputMicroDzdPerM: requireAmount('prices.outputMicroDzdPerM', prices.outputMicroDzdPerM, 0n),
  };
}

// ------------------------------------------------------------------------------- idempotency

function requestHash(parts: readonly (string | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

type WireBalance = Record<keyof Balance, string>;

function balanceToWire(balance: Balance): WireBalance {
  return {
    postedCreditsMicroDzd: balance.postedCreditsMicroDzd.toString(),
    postedDebitsMicroDzd: balance.postedDebitsMicroDzd.toString(),
    pendingMicroDzd: balance.pendingMicroDzd.toString(),
    balanceMicroDzd: balance.balanceMicroDzd.toString(),
    availableMicroDzd: balance.availableMicroDzd.toString(),
  };
}

function balanceFromWire(wire: WireBalance): Balance {
  return {
    postedCreditsMicroDzd: BigInt(wire.postedCreditsMicroDzd),
    postedDebitsMicroDzd: BigInt(wire.postedDebitsMicroDzd),
    pendingMicroDzd: BigInt(wire.pendingMicroDzd),
    balanceMicroDzd: BigInt(wire.balanceMicroDzd),
    availableMicroDzd: BigInt(wire.availableMicroDzd),
  };
}

// ------------------------------------------------------------------------------------ service

export function createLedgerService(deps: LedgerServiceDeps): LedgerService {
  const { prisma, clock } = deps;
  const maxWait = deps.transactionMaxWaitMs ?? 10_000;
  const timeout = deps.transactionTimeoutMs ?? 15_000;
  const sweepBatchSize = deps.sweepBatchSize ?? 500;
  const idempotencyTtlMs = deps.idempotencyTtlMs ?? 24 * 60 * 60 * 1000;
  const stableAfterMs = deps.entriesStableAfterMs ?? timeout + 15_000;
  const statementMaxLines = deps.statementMaxLines ?? 100_000;
  const holdOptions: HoldOptions = { clock, holdTtlMs: deps.holdTtlMs };

  /** A READ COMMITTED transaction of our own, retried on deadlock; errors mapped. */
  async function transaction<T>(work: (tx: LedgerTransactionClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await prisma.$transaction(work, { maxWait, timeout });
      } catch (error) {
        if (attempt < MAX_DEADLOCK_RETRIES && isRetryable(error)) continue;
        throw mapDatabaseError(error);
      }
    }
  }

  /** One consistent snapshot for reports (a read-only transaction never fails at COMMIT). */
  async function snapshot<T>(work: (tx: LedgerTransactionClient) => Promise<T>): Promise<T> {
    return prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`SET TRANSACTION READ ONLY`;
        return work(tx);
      },
      { maxWait, timeout, isolationLevel: 'RepeatableRead' },
    );
  }

  async function currentBalance(db: LedgerTransactionClient, accountId: string): Promise<Balance> {
    return (await repo.readBalance(db, accountId)) ?? repo.ZERO_BALANCE;
  }

  async function credit(input: CreditInput): Promise<CreditResult> {
    const accountId = requireId('accountId', input.accountId);
    const amount = requireAmount('amountMicroDzd', input.amountMicroDzd, 1n);
    const reference = requireReference(input.reference);
    const key =
      input.idempotencyKey === undefined || input.idempotencyKey === null
        ? null
        : requireId('idempotencyKey', input.idempotencyKey);
    const hash = requestHash([accountId, amount.toString(), reference]);

    return transaction(async (tx) => {
      const now = clock();
      if (key !== null) {
        const owner = await repo.claimIdempotencyKey(tx, {
          scope: CREDIT_IDEMPOTENCY_SCOPE,
          key,
          requestHash: hash,
          now,
          expiresAt: new Date(now.getTime() + idempotencyTtlMs),
        });
        if (!owner) {
          const stored = await repo.readIdempotencyRecord(tx, CREDIT_IDEMPOTENCY_SCOPE, key);
          if (!stored) throw new Error(`idempotency record ${key} vanished`);
          if (stored.requestHash !== hash) {
            throw new GatewayError(
              'idempotency_key_conflict',
              'This Idempotency-Key was already used with a different request body.',
            );
          }
          const body = stored.responseBody as { transactionId: string; balance: WireBalance };
          return { transactionId: body.transactionId, balance: balanceFromWire(body.balance) };
        }
      }
      const balance = await repo.addPostedCredits(tx, accountId, amount);
      if (!balance) {
        throw new GatewayError('resource_not_found', `Account ${accountId} does not exist.`);
      }
      const transactionId = newId('txn');
      const legs = creditLegs(accountId, amount);
      assertBalanced(legs);
      await repo.insertJournalTransaction(tx, {
        id: transactionId,
        kind: 'credit',
        accountId,
        reference,
        holdId: null,
        createdAt: now,
        legs,
      });
      if (key !== null) {
        await repo.storeIdempotencyResponse(tx, CREDIT_IDEMPOTENCY_SCOPE, key, 200, {
          transactionId,
          balance: balanceToWire(balance),
        });
      }
      return { transactionId, balance };
    });
  }

  async function placeHold(
    db: PrismaClient | LedgerTransactionClient,
    input: PlaceHoldInput,
  ): Promise<PlacedHold> {
    if ('$transaction' in db && typeof db.$transaction === 'function') {
      return transaction((tx) => placeHoldInTransaction(tx, input, holdOptions));
    }
    try {
      return await placeHoldInTransaction(db, input, holdOptions);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async function settleHold(holdId: string, usage: Usage): Promise<SettleResult> {
    requireId('holdId', holdId);
    const inputTokens = requireTokenCount('inputTokens', usage?.inputTokens);
    const outputTokens = requireTokenCount('outputTokens', usage?.outputTokens);

    return transaction(async (tx) => {
      const locked = await repo.lockHold(tx, holdId);
      if (!locked) throw new GatewayError('resource_not_found', `Hold ${holdId} does not exist.`);
      const { hold, prices } = locked;
      if (hold.status === 'settled') {
        const cost = hold.settledAmountMicroDzd ?? 0n;
        const transactionId = await repo.findSettlementTransactionId(tx, holdId);
        if (!transactionId) throw new Error(`settled hold ${holdId} has no settlement transaction`);
        return {
          holdId,
          status: 'settled',
          costMicroDzd: cost,
          releasedMicroDzd: hold.amountMicroDzd - cost,
          transactionId,
          balance: await currentBalance(tx, hold.accountId),
          replayed: true,
        };
      }
      if (hold.status !== 'pending') throw holdConflict(hold, 'settle');
      if (!prices) {
        throw new GatewayError(
          'resource_not_found',
          `Model ${hold.model} of hold ${holdId} is no longer in the catalog; it cannot be priced.`,
        );
      }
      const usageCost = costMicroDzd({
        inputTokens,
        outputTokens,
        inputPriceMicroDzdPerM: prices.inputMicroDzdPerM,
        outputPriceMicroDzdPerM: prices.outputMicroDzdPerM,
        priority: hold.priority,
      });
      const cost = usageCost < hold.amountMicroDzd ? usageCost : hold.amountMicroDzd;
      const now = clock();
      const transactionId = newId('txn');
      const legs = settlementLegs(hold.accountId, cost);
      assertBalanced(legs);
      const tier = hold.priority ? ', priority' : '';
      const balance = await repo.settleLockedHold(tx, {
        holdId,
        accountId: hold.accountId,
        heldMicroDzd: hold.amountMicroDzd,
        costMicroDzd: cost,
        transactionId,
        reference: `${hold.model}: ${inputTokens} in + ${outputTokens} out tokens${tier}`,
        at: now,
        legs,
      });
      if (!balance) throw new Error(`hold ${holdId}: account ${hold.accountId} has no balance row`);
      if (hold.scopedTokenId !== null) {
        await repo.adjustScopedToken(tx, hold.scopedTokenId, {
          spent: cost,
          reserved: -hold.amountMicroDzd,
        });
      }
      return {
        holdId,
        status: 'settled',
        costMicroDzd: cost,
        releasedMicroDzd: hold.amountMicroDzd - cost,
        transactionId,
        balance,
        replayed: false,
      };
    });
  }

  async function voidHold(holdId: string): Promise<VoidResult> {
    requireId('holdId', holdId);
    return transaction(async (tx) => {
      const locked = await repo.lockHold(tx, holdId);
      if (!locked) throw new GatewayError('resource_not_found', `Hold ${holdId} does not exist.`);
      const { hold } = locked;
      if (hold.status === 'voided' || hold.status === 'expired') {
        return {
          holdId,
          status: hold.status,
          releasedMicroDzd: hold.amountMicroDzd,
          balance: await currentBalance(tx, hold.accountId),
          replayed: true,
        };
      }
      if (hold.status !== 'pending') throw holdConflict(hold, 'void');
      const balance = await repo.adjustBalance(tx, hold.accountId, {
        debits: 0n,
        pending: -hold.amountMicroDzd,
      });
      if (!balance) throw new Error(`hold ${holdId}: account ${hold.accountId} has no balance row`);
      await repo.finalizeHold(tx, holdId, 'voided', null, clock());
      if (hold.scopedTokenId !== null) {
        await repo.adjustScopedToken(tx, hold.scopedTokenId, {
          spent: 0n,
          reserved: -hold.amountMicroDzd,
        });
      }
      return {
        holdId,
        status: 'voided',
        releasedMicroDzd: hold.amountMicroDzd,
        balance,
        replayed: false,
      };
    });
  }

  async function getHold(holdId: string): Promise<LedgerHold | null> {
    return repo.findHold(prisma, requireId('holdId', holdId));
  }

  async function expireHolds(now: Date): Promise<number> {
    requireDate('now', now);
    let total = 0;
    for (;;) {
      const count = await transaction(async (tx) => {
        const expired = await repo.lockExpiredHolds(tx, now, sweepBatchSize);
        if (expired.length === 0) return 0;
        const perAccount = new Map<string, bigint>();
        const perToken = new Map<string, bigint>();
        for (const hold of expired) {
          perAccount.set(
            hold.accountId,
            (perAccount.get(hold.accountId) ?? 0n) + hold.amountMicroDzd,
          );
          if (hold.scopedTokenId !== null) {
            perToken.set(
              hold.scopedTokenId,
              (perToken.get(hold.scopedTokenId) ?? 0n) + hold.amountMicroDzd,
            );
          }
        }
        await repo.releasePending(tx, perAccount);
        await repo.releaseReserved(tx, perToken);
        const marked = await repo.markHoldsExpired(
          tx,
          expired.map((hold) => hold.id),
          clock(),
        );
        if (marked !== expired.length) throw new Error('expired holds changed under their lock');
        return expired.length;
      });
      total += count;
      if (count < sweepBatchSize) return total;
    }
  }

  function startSweeper(options: SweeperOptions): () => Promise<void> {
    if (!Number.isSafeInteger(options.intervalMs) || options.intervalMs <= 0) {
      throw new RangeError('intervalMs must be a positive integer');
    }
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    const sweep = async () => {
      try {
        const now = clock();
        // Expired idempotency records (credits included) are purged by billing's idempotency
        // purge (RequestIdempotency.purgeExpired), which covers every scope.
        const count = await expireHolds(now);
        if (count > 0) options.onExpired?.(count);
      } catch (error) {
        options.onError?.(error);
      }
    };
    const schedule = () => {
      timer = setTimeout(() => {
        running = sweep().finally(() => {
          running = undefined;
          if (!stopped) schedule();
        });
      }, options.intervalMs);
      timer.unref();
    };
    schedule();
    return async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    };
  }

  async function getBalance(accountId: string): Promise<Balance> {
    requireId('accountId', accountId);
    const balance = await repo.readBalance(prisma, accountId);
    if (balance) return balance;
    if (await repo.accountExists(prisma, accountId)) return repo.ZERO_BALANCE;
    throw new GatewayError('resource_not_found', `Account ${accountId} does not exist.`);
  }

  async function listEntries(query: ListEntriesQuery = {}): Promise<EntryPage> {
    const limit = requireLimit(query.limit, MAX_ENTRIES_PAGE, DEFAULT_ENTRIES_PAGE);
    const accountId =
      query.accountId === undefined ? undefined : requireId('account', query.accountId);
    const ledgerAccount =
      query.ledgerAccount === undefined
        ? undefined
        : requireId('ledgerAccount', query.ledgerAccount);
    const from = query.from === undefined ? undefined : requireDate('from', query.from);
    const requestedTo = query.to === undefined ? undefined : requireDate('to', query.to);
    if (from && requestedTo) requireRange(from, requestedTo);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const through = new Date(clock().getTime() - stableAfterMs);
    const to = requestedTo && requestedTo < through ? requestedTo : through;
    const rows = await repo.selectEntries(prisma, {
      ...(accountId === undefined ? {} : { accountId }),
      ...(ledgerAccount === undefined ? {} : { ledgerAccount }),
      ...(from === undefined ? {} : { from }),
      ...(after === undefined ? {} : { after }),
      to,
      limit: limit + 1,
    });
    const entries = rows.slice(0, limit);
    const last = entries[entries.length - 1];
    const nextCursor =
      rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
    return { entries, nextCursor, through: to };
  }

  async function statement(accountId: string, range: { from: Date; to: Date }): Promise<Statement> {
    requireId('accountId', accountId);
    const from = requireDate('from', range?.from);
    const to = requireDate('to', range?.to);
    requireRange(from, to);
    return snapshot(async (tx) => {
      if (!(await repo.accountExists(tx, accountId))) {
        throw new GatewayError('resource_not_found', `Account ${accountId} does not exist.`);
      }
      const opening = await repo.postedBalanceBefore(tx, accountId, from);
      const entries = await repo.selectEntries(tx, {
        accountId,
        from,
        to,
        limit: statementMaxLines + 1,
      });
      if (entries.length > statementMaxLines) {
        throw new GatewayError(
          'invalid_request_body',
          `The statement would have more than ${statementMaxLines} lines; ask for a shorter period.`,
          { param: 'from' },
        );
      }
      let running = opening;
      let credits = 0n;
      let debits = 0n;
      const lines: StatementLine[] = entries.map((entry) => {
        running += entry.amountMicroDzd;
        if (entry.amountMicroDzd > 0n) credits += entry.amountMicroDzd;
        else debits -= entry.amountMicroDzd;
        return {
          entryId: entry.id,
          transactionId: entry.transactionId,
          kind: entry.kind,
          reference: entry.reference,
          holdId: entry.holdId,
          createdAt: entry.createdAt,
          amountMicroDzd: entry.amountMicroDzd,
          balanceAfterMicroDzd: running,
        };
      });
      return {
        accountId,
        from,
        to,
        openingBalanceMicroDzd: opening,
        totalCreditsMicroDzd: credits,
        totalDebitsMicroDzd: debits,
        closingBalanceMicroDzd: running,
        lines,
      };
    });
  }

  async function statementCsv(accountId: string, range: { from: Date; to: Date }): Promise<string> {
    return statementToCsv(await statement(accountId, range));
  }

  async function checkInvariants(): Promise<InvariantReport> {
    const violations = await snapshot((tx) => collectViolations(tx));
    return { ok: violations.length === 0, violations };
  }

  return {
    credit,
    placeHold,
    settleHold,
    voidHold,
    getHold,
    expireHolds,
    startSweeper,
    getBalance,
    listEntries,
    statement,
    statementCsv,
    checkInvariants,
  };
}

export const STATEMENT_CSV_HEADER = [
  'date',
  'entry_id',
  'transaction_id',
  'kind',
  'hold_id',
  'reference',
  'amount_dzd',
  'balance_dzd',
] as const;

/**
 * RFC 4180 CSV of a statement: a header row, an `opening_balance` row at `from`, one row per
 * entry, a `closing_balance` row at `to`. Times in ISO 8601 UTC; DZD with exactly 6 decimals.
 */
export function statementToCsv(statement: Statement): string {
  const balanceRow = (kind: string, at: Date, balance: bigint) =>
    csvRow([at.toISOString(), '', '', kind, '', '', '', microDzdToFixedDzd(balance)]);
  let csv = csvRow(STATEMENT_CSV_HEADER);
  csv += balanceRow('opening_balance', statement.from, statement.openingBalanceMicroDzd);
  for (const line of statement.lines) {
    csv += csvRow([
      line.createdAt.toISOString(),
      line.entryId.toString(),
      csvField(line.transactionId),
      line.kind,
      csvField(line.holdId ?? ''),
      csvTextField(line.reference),
      microDzdToFixedDzd(line.amountMicroDzd),
      microDzdToFixedDzd(line.balanceAfterMicroDzd),
    ]);
  }
  csv += balanceRow('closing_balance', statement.to, statement.closingBalanceMicroDzd);
  return csv;
}
