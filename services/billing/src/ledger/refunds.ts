import { holdNotFound, retryStatement } from './holds.js';
import { newId } from './ids.js';
import type { LedgerStore } from './store.js';
import type { RefundResult } from './types.js';
import { requireId } from './validation.js';

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
  const outcome = await retryStatement(() => store.refundHold(holdId, newId('txn'), at()));
  if (outcome.outcome === 'not_found') throw holdNotFound(holdId);
  const settled = outcome.outcome !== 'not_settled';
  return {
    holdId,
    status: settled ? 'refunded' : 'not_settled',
    refundedMicroDzd: settled ? outcome.refundedMicroDzd : 0n,
    replayed: outcome.outcome === 'replayed',
  };
}
