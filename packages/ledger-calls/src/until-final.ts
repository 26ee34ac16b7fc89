/**
 * Retrying a hold's end until its outcome is final. A deadlock or a serialization failure undoes
 * the statement (or the item's savepoint in a batch) entirely, so trying again is safe; three
 * attempts in all. Shared by billing's settlements and the worker's, so both retry alike.
 */
import { newId } from '@gateway/crypto';
import type { ItemFailure, SettleInput, SettleOutcome } from './outcomes.js';

export const MAX_ATTEMPTS = 3;

/** A failure undone entirely: a deadlock (40P01) or a serialization failure (40001). */
export function isRetryableSqlError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** A database error confined to one settlement, as the error the caller would have seen. */
export function itemError(failure: ItemFailure): Error {
  return Object.assign(new Error(failure.message), { code: failure.sqlState });
}

export type FinalSettleOutcome = Exclude<SettleOutcome, ItemFailure>;

/**
 * Settles one hold through `submit` (one statement, possibly shared with other settlements),
 * each attempt under a new journal transaction id. Throws the statement's error, or the item's
 * as an Error carrying its SQLSTATE as `code`, once it is not retryable or attempts ran out.
 */
export async function settleUntilFinal(
  submit: (request: SettleInput) => Promise<SettleOutcome>,
  request: Omit<SettleInput, 'transactionId'>,
  isRetryable: (error: unknown) => boolean = isRetryableSqlError,
): Promise<FinalSettleOutcome> {
  for (let attempt = 1; ; attempt += 1) {
    let outcome: SettleOutcome;
    try {
      outcome = await submit({ ...request, transactionId: newId('txn') });
    } catch (error) {
      // The whole statement failed (connection, timeout): nothing of it was applied.
      if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
      throw error;
    }
    if (outcome.outcome !== 'error') return outcome;
    const error = itemError(outcome);
    if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
    throw error;
  }
}

/** Runs one statement again (MAX_ATTEMPTS in all) when it failed retryably; throws otherwise. */
export async function retryStatement<T>(
  statement: () => Promise<T>,
  isRetryable: (error: unknown) => boolean = isRetryableSqlError,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await statement();
    } catch (error) {
      if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
      throw error;
    }
  }
}
