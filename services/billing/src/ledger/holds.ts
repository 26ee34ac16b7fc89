/**
 * Holds: placed by admission (admission/admission.ts, one SQL function) → settle | void | expire
 * (sweeper.ts). Rules: services/billing/README.md. The refusals admission shares with the
 * ledger's wording (budgetExhausted, holdIdTaken) and those of a hold's end are
 * @gateway/ledger-calls' (edge and the worker word them alike). Settle and void are one statement
 * each in the store; concurrent settlements are grouped into one statement by a Batcher
 * (ledger-service.ts).
 */
import {
  budgetExhausted,
  holdConflict,
  holdIdTaken,
  holdNotFound,
  holdUnpriced,
  retryStatement as retryPgStatement,
  settleRequestOf,
  settleUntilFinal,
  voidReportOf,
  type FinalSettleOutcome,
} from '@gateway/ledger-calls';
import { isRetryable, mapDatabaseError } from './db-errors.js';
import type { SettleOutcome, SettleInput } from './store.js';
import type { Balance, SettleResult, Usage, VoidResult, VoidUsage } from './types.js';
import type { LedgerStore } from './prisma-store.js';
import { requireId } from './validation.js';

export const ZERO_BALANCE: Balance = {
  postedCreditsMicroDzd: 0n,
  postedDebitsMicroDzd: 0n,
  pendingMicroDzd: 0n,
  balanceMicroDzd: 0n,
  availableMicroDzd: 0n,
};

export { budgetExhausted, holdIdTaken, holdNotFound };

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
  const request = settleRequestOf(requireId('holdId', holdId), usage);
  let outcome: FinalSettleOutcome;
  try {
    outcome = await settleUntilFinal(submit, request, isRetryable);
  } catch (error) {
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
      throw holdUnpriced(outcome.hold);
  }
}

/**
 * Runs one store statement, again (up to MAX_ATTEMPTS in all) when the whole statement failed
 * retryably (connection, timeout: nothing of it was applied); other errors mapped.
 */
export async function retryStatement<T>(statement: () => Promise<T>): Promise<T> {
  try {
    return await retryPgStatement(statement, isRetryable);
  } catch (error) {
    throw mapDatabaseError(error);
  }
}

export async function voidHoldWith(
  store: LedgerStore,
  holdId: string,
  at: () => Date,
  usage: VoidUsage = {},
): Promise<VoidResult> {
  requireId('holdId', holdId);
  const report = voidReportOf(usage);
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
