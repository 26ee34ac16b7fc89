/**
 * The refusals of a hold's end, worded once for billing's API and the worker's direct calls: a
 * hold that does not exist, one already final, one whose model left the catalog.
 */
import { GatewayError, formatDzd } from '@gateway/contracts';
import type { HoldState } from './outcomes.js';

/** `details.result` of the `conflict` GatewayError raised for a hold no longer pending. */
export type HoldConflictResult = 'hold_settled' | 'hold_voided' | 'hold_expired' | 'hold_id_taken';

/** 409 `conflict`: the hold is no longer pending, so it cannot be settled or voided now. */
export function holdConflict(hold: HoldState, attempted: 'settle' | 'void'): GatewayError {
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

/** 404 `resource_not_found`: the hold's model left the catalog, so its usage has no price. */
export function holdUnpriced(hold: HoldState): GatewayError {
  return new GatewayError(
    'resource_not_found',
    `Model ${hold.model} of hold ${hold.id} is no longer in the catalog; it cannot be priced.`,
  );
}
