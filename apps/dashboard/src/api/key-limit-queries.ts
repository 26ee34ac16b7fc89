import { useQuery } from '@tanstack/react-query';
import { DASHBOARD_RATE_LIMIT_ROUTES as R } from '@gateway/contracts/dashboard-routes';
import { callRoute, ownKeyOnly } from './client';
import type { KeyRateLimitPutRequest, KeyRateLimitView } from './contract';
import { useChange } from './queries';

/*
 * Per-key rate limits (contract: DASHBOARD_RATE_LIMIT_ROUTES): an owner's own account
 * (`account` null: the session's) or, for operators, the account whose detail page is open.
 */

/** Whose limits: a key (by name) or a registered scoped token (by id) of an account. */
export interface RateLimitTarget {
  /** null: the session's own account (owners). */
  account: string | null;
  kind: KeyRateLimitView['applies_to'];
  /** The key's name or the token's id. */
  owner: string;
}

const limitsKey = (account: string | null) => ['rate-limits', account ?? 'own'] as const;

export const useKeyRateLimits = (account: string | null) =>
  useQuery({
    queryKey: limitsKey(account),
    queryFn: () =>
      account === null
        ? callRoute(R.listOwn, {})
        : callRoute(R.listOfAccount, { params: { id: account } }),
  });

function putLimit({ account, kind, owner }: RateLimitTarget, body: KeyRateLimitPutRequest) {
  if (account === null) {
    ownKeyOnly(kind);
    return callRoute(R.putOwnKey, { params: { name: owner }, body });
  }
  return kind === 'api_key'
    ? callRoute(R.putAccountKey, { params: { id: account, name: owner }, body })
    : callRoute(R.putAccountToken, { params: { id: account, tokenId: owner }, body });
}

function removeLimit({ account, kind, owner }: RateLimitTarget): Promise<void> {
  if (account === null) {
    ownKeyOnly(kind);
    return callRoute(R.removeOwnKey, { params: { name: owner } });
  }
  return kind === 'api_key'
    ? callRoute(R.removeAccountKey, { params: { id: account, name: owner } })
    : callRoute(R.removeAccountToken, { params: { id: account, tokenId: owner } });
}

export const useSetKeyRateLimit = () =>
  useChange(
    ({ target, body }: { target: RateLimitTarget; body: KeyRateLimitPutRequest }) =>
      putLimit(target, body),
    ({ target }) => [limitsKey(target.account)],
  );

export const useRemoveKeyRateLimit = () =>
  useChange(removeLimit, (target) => [limitsKey(target.account)]);
