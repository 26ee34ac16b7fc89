/**
 * Holds: placed by admission (admission/admission.ts, one SQL function) → settle | void | expire
 * (sweeper.ts). Rules: services/billing/README.md. The refusals admission shares with the
 * ledger's wording (budgetExhausted, holdIdTaken) are here. Settle and void are one statement
 * each in the store; concurrent settlements are grouped into one statement by a Batcher
 * (ledger-service.ts).
 */
import { GatewayError, formatDzd } from '@gateway/contracts';
import { isRetryable, mapDatabaseError } from './db-errors.js';
import { newId } from '../identity/secrets.js';
import type { HoldState, RunReport, SettleOutcome, SettleInput, VoidReport } from './store.js';
import type {
  Balance,
  HoldConflictResult,
  SettleResult,
  Usage,
  VoidResult,
  VoidUsage,
} from './types.js';
import type { LedgerStore } from './prisma-store.js';
import { requireId, requireTokenCount } from './validation.js';

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

/** 409 `conflict`: the caller-supplied hold id names another account's hold. */
export function holdIdTaken(holdId: string, holdStatus: string): GatewayError {
  const result: HoldConflictResult = 'hold_id_taken';
  return new GatewayError('conflict', `Hold ${holdId} already exists for another account.`, {
    details: { result, holdId, holdStatus },
  });
}

export function budgetExhausted(
  token: { spentMicroDzd: bigint; reservedMicroDzd: bigint },
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
  submit: (request: SettleInput) => Promise<SettleOutcome>,
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

/** The usage record's part of a settlement: checked, never priced. */
function usageRecordFields(
  usage: Usage,
): Pick<SettleInput, 'reasoningTokens' | 'cancelled' | 'startedAt' | 'generationMs'> {
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
