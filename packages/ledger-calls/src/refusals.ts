/**
 * The ledger's refusals, worded once for billing's API and the services that call its functions
 * directly (ADR 0070): a hold that does not exist, one already final, one whose model left the
 * catalog; and at admission, a hold id another account holds, a spent budget, a short balance and
 * an unknown model.
 */
import { GatewayError, LIMITS, formatDzd } from '@gateway/contracts';
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

/** 409 `conflict`: the caller-supplied hold id names another account's hold. */
export function holdIdTaken(holdId: string, holdStatus: string): GatewayError {
  const result: HoldConflictResult = 'hold_id_taken';
  return new GatewayError('conflict', `Hold ${holdId} already exists for another account.`, {
    details: { result, holdId, holdStatus },
  });
}

/** 402 `budget_exhausted` by a scoped token's spending limit. */
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

export const INSUFFICIENT_BALANCE_MESSAGE =
  'Insufficient balance: the available balance does not cover the estimated cost of this request.';

/** 404 `model_not_found`, echoing at most the id length accepted (ids come from clients). */
export const modelNotFound = (id: string): GatewayError =>
  new GatewayError('model_not_found', `Model '${clipModelId(id)}' not found`, { param: 'model' });

function clipModelId(id: string): string {
  return id.length > LIMITS.modelIdMaxLength ? `${id.slice(0, LIMITS.modelIdMaxLength)}…` : id;
}
