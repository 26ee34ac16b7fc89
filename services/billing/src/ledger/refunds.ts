import { GatewayError } from '@gateway/contracts';
import { isRetryable, mapDatabaseError } from './db-errors.js';
import { newId } from './ids.js';
import type { LedgerStore, RefundOutcome } from './store.js';
import type { RefundResult } from './types.js';
import { requireId } from './validation.js';

const MAX_ATTEMPTS = 3;

/**
 * Refunds a settled hold whose answer was delivered to nobody (issue 15, defect 4): a
 * `reversal` transaction gives the settled cost back; the hold stays `settled` and is marked
 * refunded. Idempotent on the hold id. A hold that is not settled charged nothing: answered
 * `not_settled`, nothing moves.
 */
export async function refundHoldWith<Tx>(
  store: LedgerStore<Tx>,
  holdId: string,
  at: () => Date,
): Promise<RefundResult> {
  requireId('holdId', holdId);
  let outcome: RefundOutcome;
  for (let attempt = 1; ; attempt += 1) {
    try {
      outcome = await store.refundHold(holdId, newId('txn'), at());
      break;
    } catch (error) {
      if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
      throw mapDatabaseError(error);
    }
  }
  if (outcome.outcome === 'not_found') {
    throw new GatewayError('resource_not_found', `Hold ${holdId} does not exist.`);
  }
  const settled = outcome.outcome !== 'not_settled';
  return {
    holdId,
    status: settled ? 'refunded' : 'not_settled',
    refundedMicroDzd: settled ? outcome.refundedMicroDzd : 0n,
    replayed: outcome.outcome === 'replayed',
  };
}
