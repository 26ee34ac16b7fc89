import { useQuery } from '@tanstack/react-query';
import { DASHBOARD_BUDGET_ROUTES as R } from '@gateway/contracts/dashboard-routes';
import { callRoute, ownKeyOnly } from './client';
import type { BudgetPutRequest, BudgetView } from './contract';
import { useChange } from './queries';

/*
 * Budgets (contract: DASHBOARD_BUDGET_ROUTES): an owner's own account (`account` null: the
 * session's) or, for operators, the account whose detail page is open.
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

export const useBudgets = (account: string | null) =>
  useQuery({
    queryKey: budgetsKey(account),
    queryFn: () =>
      account === null
        ? callRoute(R.listOwn, {})
        : callRoute(R.listOfAccount, { params: { id: account } }),
    // Spend moves with every request: a page left open stays roughly current.
    refetchInterval: 30_000,
  });

function putBudget({ account, kind, owner }: BudgetTarget, body: BudgetPutRequest) {
  if (account === null) {
    ownKeyOnly(kind);
    return callRoute(R.putOwnKey, { params: { name: owner }, body });
  }
  return kind === 'api_key'
    ? callRoute(R.putAccountKey, { params: { id: account, name: owner }, body })
    : callRoute(R.putAccountToken, { params: { id: account, tokenId: owner }, body });
}

function removeBudget({ account, kind, owner }: BudgetTarget): Promise<void> {
  if (account === null) {
    ownKeyOnly(kind);
    return callRoute(R.removeOwnKey, { params: { name: owner } });
  }
  return kind === 'api_key'
    ? callRoute(R.removeAccountKey, { params: { id: account, name: owner } })
    : callRoute(R.removeAccountToken, { params: { id: account, tokenId: owner } });
}

export const useSetBudget = () =>
  useChange(
    ({ target, body }: { target: BudgetTarget; body: BudgetPutRequest }) => putBudget(target, body),
    ({ target }) => [budgetsKey(target.account)],
  );

export const useRemoveBudget = () =>
  useChange(removeBudget, (target) => [budgetsKey(target.account)]);
