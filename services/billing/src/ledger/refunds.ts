import { GatewayError } from '@gateway/contracts';
import { holdNotFound, retryStatement } from './holds.js';
import { newId } from '../identity/secrets.js';
import type { LedgerStore } from './prisma-store.js';
import type { RefundResult } from './types.js';
import { requireId } from './validation.js';

/**
 * How long after its settlement a hold may be refunded. Every legitimate
 * refund follows its settlement within seconds to minutes: the worker's final reply found no
 * queue, edge gave up waiting, edge's reply queue dead-lettered the reply after 30 s, or the
 * refund waited in `billing.settlements` while billing was away. The window bounds what a
 * compromised worker or edge credential can give back to recent settlements, no more than it
 * could already forgo by settling those requests at zero.
 */
export const REFUND_WINDOW_MS = 60 * 60_000;

/**
 * Refunds a settled hold whose answer was delivered to nobody: a
 * `reversal` transaction gives the settled cost back; the hold stays `settled` and is marked
 * refunded. Idempotent on the hold id. A hold that is not settled charged nothing: answered
 * `not_settled`, nothing moves. A hold settled more than `REFUND_WINDOW_MS` ago is refused (409
 * `conflict`): its answer was delivered, or nobody can tell any more.
 */
export async function refundHoldWith(
  store: LedgerStore,
  holdId: string,
  at: () => Date,
): Promise<RefundResult> {
  requireId('holdId', holdId);
  // The settlement time never changes once set, so checking it first is not a race.
  const hold = await store.findHold(holdId);
  if (!hold) throw holdNotFound(holdId);
  const settledAt = hold.status === 'settled' ? hold.finalizedAt : null;
  if (settledAt && at().getTime() - settledAt.getTime() > REFUND_WINDOW_MS) {
    throw new GatewayError(
      'conflict',
      `Hold ${holdId} was settled more than ${REFUND_WINDOW_MS / 60_000} minutes ago; it can no longer be refunded`,
      { details: { holdId } },
    );
  }
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
