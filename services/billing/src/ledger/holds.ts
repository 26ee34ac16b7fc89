/**
 * Holds: place (inside admission's transaction) → settle | void | expire (sweeper.ts). Rules:
 * services/billing/README.md. Settle and void are one statement each in the store; concurrent
 * settlements are grouped into one statement by a Batcher (ledger-service.ts).
 */
import { GatewayError, formatDzd } from '@gateway/contracts';
import { INSUFFICIENT_BALANCE_MESSAGE, isRetryable, mapDatabaseError } from './db-errors.js';
import { newId } from '../identity/secrets.js';
import type {
  HoldState,
  RunReport,
  SettleOutcome,
  SettleRequest,
  TokenCounters,
  VoidReport,
} from './store.js';
import type {
  Balance,
  HoldConflictResult,
  HoldPrices,
  PlacedHold,
  PlaceHoldInput,
  SettleResult,
  Usage,
  VoidResult,
  VoidUsage,
} from './types.js';
import type { LedgerStore, LedgerTx } from './prisma-store.js';
import { requireAmount, requireId, requireTokenCount } from './validation.js';

export interface HoldOptions {
  clock: () => Date;
  holdTtlMs: number;
}

/** What placing a hold needs of the store: all inside the caller's transaction. */
export type HoldPlacementStore = {
  [
    K in 'lockBalance' | 'lockScopedToken' | 'catalogPrices' | 'insertHoldAndReserve'
  ]: LedgerStore[K];
} & { findHold(holdId: string, tx: LedgerTx): ReturnType<LedgerStore['findHold']> };

const MAX_ATTEMPTS = 3;

export const ZERO_BALANCE: Balance = {
  postedCreditsMicroDzd: 0n,
  postedDebitsMicroDzd: 0n,
  pendingMicroDzd: 0n,
  balanceMicroDzd: 0n,
  availableMicroDzd: 0n,
};

function holdConflict(hold: HoldState, attempted: 'settle' | 'void'): GatewayError {
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

/** 404 `resource_not_found`: no hold has this id. */
export function holdNotFound(holdId: string): GatewayError {
  return new GatewayError('resource_not_found', `Hold ${holdId} does not exist.`);
}

/** The caller-supplied id already names a hold: the same account's is returned as it is. */
function replayOrConflict(existing: PlacedHold | Omit<PlacedHold, 'replayed'>, accountId: string) {
  if (existing.accountId === accountId) return { ...existing, replayed: true };
  throw holdIdTaken(existing.id, existing.status);
}

/** 409 `conflict`: the caller-supplied hold id names another account's hold. */
export function holdIdTaken(holdId: string, holdStatus: string): GatewayError {
  const result: HoldConflictResult = 'hold_id_taken';
  return new GatewayError('conflict', `Hold ${holdId} already exists for another account.`, {
    details: { result, holdId, holdStatus },
  });
}

export function budgetExhausted(
  token: Pick<TokenCounters, 'spentMicroDzd' | 'reservedMicroDzd'>,
  limit: bigint,
  amount: bigint,
): GatewayError {
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

function checkPrices(prices: HoldPrices): HoldPrices {
  return {
    inputMicroDzdPerM: requireAmount('prices.inputMicroDzdPerM', prices.inputMicroDzdPerM, 0n),
    outputMicroDzdPerM: requireAmount('prices.outputMicroDzdPerM', prices.outputMicroDzdPerM, 0n),
  };
}

function requireInput(input: PlaceHoldInput, options: HoldOptions) {
  if (typeof input.priority !== 'boolean') {
    throw new GatewayError('invalid_request_body', 'priority must be a boolean', {
      param: 'priority',
    });
  }
  const ttlMs = input.ttlMs ?? options.holdTtlMs;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new GatewayError('invalid_request_body', 'ttlMs must be a positive integer', {
      param: 'ttlMs',
    });
  }
  return {
    accountId: requireId('accountId', input.accountId),
    holdId: input.holdId === undefined ? newId('hold') : requireId('holdId', input.holdId),
    amount: requireAmount('amountMicroDzd', input.amountMicroDzd, 0n),
    model: requireId('model', input.model),
    tokenId: input.scopedToken ? requireId('scopedToken.id', input.scopedToken.id) : null,
    ttlMs,
  };
}

/**
 * placeHold inside a transaction the caller owns (admission: rate limit, checks and hold in one
 * transaction). Locks the balance row, then the scoped-token row; checks the spending limit
 * (`budget_exhausted`), then the available balance (`insufficient_balance`); only then writes.
 * Idempotent on a caller-supplied hold id: the same account gets the existing hold back
 * (`replayed`, nothing reserved again), another account `conflict`. A GatewayError thrown here
 * leaves nothing written (only row locks), so the caller may still commit.
 */
export async function placeHoldWith(
  store: HoldPlacementStore,
  tx: LedgerTx,
  input: PlaceHoldInput,
  options: HoldOptions,
): Promise<PlacedHold> {
  const { accountId, holdId, amount, model, tokenId, ttlMs } = requireInput(input, options);
  const balance = await store.lockBalance(tx, accountId);
  if (input.holdId !== undefined) {
    const existing = await store.findHold(holdId, tx);
    if (existing) return replayOrConflict(existing, accountId);
  }
  if (tokenId !== null) {
    const token = await store.lockScopedToken(tx, tokenId);
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
  const hold = await store.insertHoldAndReserve(tx, {
    id: holdId,
    accountId,
    scopedTokenId: tokenId,
    amountMicroDzd: amount,
    model,
    prices: input.prices ? checkPrices(input.prices) : await store.catalogPrices(tx, model),
    priority: input.priority,
    expiresAt: new Date(now.getTime() + ttlMs),
    createdAt: now,
  });
  if (hold) return { ...hold, replayed: false };
  // Same id placed concurrently for another account (ours would have waited on our lock).
  const existing = await store.findHold(holdId, tx);
  if (!existing) throw new Error(`hold ${holdId}: insert conflicted but the hold is missing`);
  return replayOrConflict(existing, accountId);
}

/** A database error confined to one settlement, as the error the caller would have seen. */
function itemError(sqlState: string, message: string): Error {
  return Object.assign(new Error(message), { code: sqlState });
}

function settleResult(outcome: SettleOutcome & { outcome: 'settled' | 'replayed' }): SettleResult {
  return {
    holdId: outcome.hold.id,
    status: 'settled',
    costMicroDzd: outcome.costMicroDzd,
    releasedMicroDzd: outcome.hold.amountMicroDzd - outcome.costMicroDzd,
    transactionId: outcome.transactionId,
    balance: outcome.balance ?? ZERO_BALANCE,
    replayed: outcome.outcome === 'replayed',
  };
}

/**
 * Settles through `submit` (one statement, possibly shared with other settlements). A deadlock
 * or serialization failure confined to this item is retried; other outcomes are final.
 */
export async function settleHoldWith(
  submit: (request: SettleRequest) => Promise<SettleOutcome>,
  holdId: string,
  usage: Usage,
): Promise<SettleResult> {
  requireId('holdId', holdId);
  const inputTokens = requireTokenCount('inputTokens', usage?.inputTokens);
  const outputTokens = requireTokenCount('outputTokens', usage?.outputTokens);
  const record = usageRecordFields(usage);
  for (let attempt = 1; ; attempt += 1) {
    let outcome: SettleOutcome;
    try {
      outcome = await submit({
        holdId,
        inputTokens,
        outputTokens,
        transactionId: newId('txn'),
        ...record,
      });
    } catch (error) {
      // The whole statement failed (connection, timeout): nothing of it was applied.
      if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
      throw mapDatabaseError(error);
    }
    switch (outcome.outcome) {
      case 'settled':
      case 'replayed':
        return settleResult(outcome);
      case 'not_found':
        throw holdNotFound(holdId);
      case 'conflict':
        throw holdConflict(outcome.hold, 'settle');
      case 'unpriced':
        throw new GatewayError(
          'resource_not_found',
          `Model ${outcome.hold.model} of hold ${holdId} is no longer in the catalog; it cannot be priced.`,
        );
      case 'error': {
        const error = itemError(outcome.sqlState, outcome.message);
        if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
        throw mapDatabaseError(error);
      }
    }
  }
}

/** The usage record's part of a settlement (issue 16): checked, never priced. */
function usageRecordFields(
  usage: Usage,
): Pick<SettleRequest, 'reasoningTokens' | 'cancelled' | 'startedAt' | 'generationMs'> {
  const reasoning = usage.reasoningTokens;
  return {
    ...(reasoning === undefined
      ? {}
      : { reasoningTokens: requireTokenCount('reasoningTokens', reasoning) }),
    ...(usage.cancelled === true ? { cancelled: true } : {}),
    ...runReport(usage),
  };
}

function runReport(run: { startedAtMs?: number; generationMs?: number }): RunReport {
  return {
    ...(run.startedAtMs === undefined ? {} : { startedAt: new Date(run.startedAtMs) }),
    ...(run.generationMs === undefined ? {} : { generationMs: run.generationMs }),
  };
}

/**
 * Runs one store statement, again (up to MAX_ATTEMPTS in all) when the whole statement failed
 * retryably (connection, timeout: nothing of it was applied); other errors mapped.
 */
export async function retryStatement<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await statement();
    } catch (error) {
      if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
      throw mapDatabaseError(error);
    }
  }
}

export async function voidHoldWith(
  store: LedgerStore,
  holdId: string,
  at: () => Date,
  usage: VoidUsage = {},
): Promise<VoidResult> {
  requireId('holdId', holdId);
  const report: VoidReport = {
    ...(usage.outcome === undefined ? {} : { outcome: usage.outcome }),
    ...runReport(usage),
  };
  const outcome = await retryStatement(() => store.voidHold(holdId, at(), report));
  if (outcome.outcome === 'not_found') throw holdNotFound(holdId);
  if (outcome.outcome === 'conflict') throw holdConflict(outcome.hold, 'void');
  const { hold } = outcome;
  return {
    holdId,
    status: hold.status === 'expired' ? 'expired' : 'voided',
    releasedMicroDzd: hold.amountMicroDzd,
    balance: outcome.balance ?? ZERO_BALANCE,
    replayed: outcome.outcome === 'replayed',
  };
}
