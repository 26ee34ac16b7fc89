import { useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { KeyRateLimitList, KeyRateLimitPutRequest, KeyRateLimitView } from './contract';
import { segment, useChange } from './queries';

/*
 * Per-key rate limits: an owner's own account (`account` null: the session's) or,
 * for operators, the account whose detail page is open.
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

const accountPath = (account: string | null) =>
  account === null ? '' : `/operator/accounts/${segment(account)}`;

function limitPath({ account, kind, owner }: RateLimitTarget): string {
  const collection = kind === 'api_key' ? 'api-keys' : 'scoped-tokens';
  return `${accountPath(account)}/${collection}/${segment(owner)}/rate-limit`;
}

export const useKeyRateLimits = (account: string | null) =>
  useQuery({
    queryKey: limitsKey(account),
    queryFn: () => api<KeyRateLimitList>('GET', `${accountPath(account)}/rate-limits`),
  });

export const useSetKeyRateLimit = () =>
  useChange(
    ({ target, body }: { target: RateLimitTarget; body: KeyRateLimitPutRequest }) =>
      api<KeyRateLimitView>('PUT', limitPath(target), body),
    ({ target }) => [limitsKey(target.account)],
  );

export const useRemoveKeyRateLimit = () =>
  useChange(
    (target: RateLimitTarget) => api<void>('DELETE', limitPath(target)),
    (target) => [limitsKey(target.account)],
  );
