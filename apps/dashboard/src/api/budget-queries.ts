import { useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { BudgetList, BudgetPutRequest, BudgetView } from './contract';
import { segment, useChange } from './queries';

/*
 * Budgets: an owner's own account (`account` null: the session's) or, for
 * operators, the account whose detail page is open.
 */

/** Whose budget: a key (by name) or a scoped token (by id) of an account. */
export interface BudgetTarget {
  /** null: the session's own account (owners). */
  account: string | null;
  kind: BudgetView['applies_to'];
  /** The key's name or the token's id. */
  owner: string;
}

const budgetsKey = (account: string | null) => ['budgets', account ?? 'own'] as const;

const accountPath = (account: string | null) =>
  account === null ? '' : `/operator/accounts/${segment(account)}`;

function budgetPath({ account, kind, owner }: BudgetTarget): string {
  const collection = kind === 'api_key' ? 'api-keys' : 'scoped-tokens';
  return `${accountPath(account)}/${collection}/${segment(owner)}/budget`;
}

export const useBudgets = (account: string | null) =>
  useQuery({
    queryKey: budgetsKey(account),
    queryFn: () => api<BudgetList>('GET', `${accountPath(account)}/budgets`),
    // Spend moves with every request: a page left open stays roughly current.
    refetchInterval: 30_000,
  });

export const useSetBudget = () =>
  useChange(
    ({ target, body }: { target: BudgetTarget; body: BudgetPutRequest }) =>
      api<BudgetView>('PUT', budgetPath(target), body),
    ({ target }) => [budgetsKey(target.account)],
  );

export const useRemoveBudget = () =>
  useChange(
    (target: BudgetTarget) => api<void>('DELETE', budgetPath(target)),
    (target) => [budgetsKey(target.account)],
  );
