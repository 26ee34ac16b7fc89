import {
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
  type QueryKey,
} from '@tanstack/react-query';
import { DASHBOARD_OPERATOR_ROUTES as OPERATOR } from '@gateway/contracts/dashboard-operator-routes';
import { DASHBOARD_OWNER_ROUTES as OWNER } from '@gateway/contracts/dashboard-owner-routes';
import { callRoute } from './client';
import type { DashboardCreditRequest, Page } from './contract';

const keys = {
  overview: ['overview'] as const,
  apiKeys: ['api-keys'] as const,
  accounts: ['operator', 'accounts'] as const,
  account: (id: string) => ['operator', 'account', id] as const,
};

/** A path segment of the app's own addresses (its client routes, not the API's). */
export const segment = encodeURIComponent;

/** A mutation that refreshes the given queries once it succeeded. */
export function useChange<TInput, TResult>(
  mutationFn: (input: TInput) => Promise<TResult>,
  invalidates: (input: TInput) => QueryKey[],
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: async (_result, input) => {
      await Promise.all(
        invalidates(input).map((queryKey) => client.invalidateQueries({ queryKey })),
      );
    },
  });
}

/** The row type of a list answer (`Page<row>`). */
export type RowOf<P extends Page<unknown>> = P['data'][number];

const allRows = <T>({ pages }: { pages: Page<T>[] }): T[] => pages.flatMap((page) => page.data);

/**
 * Cursor pages of a list route, "load more" style; `data` is the rows loaded so far. `load`
 * calls the route with the query (`query`'s parameters, the page's `limit` and `cursor`).
 */
export function usePages<T>(
  queryKey: readonly unknown[],
  load: (query: URLSearchParams) => Promise<Page<T>>,
  { limit = 20, query = new URLSearchParams() }: { limit?: number; query?: URLSearchParams } = {},
) {
  return useInfiniteQuery({
    queryKey: [...queryKey, query.toString(), limit],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) => {
      const params = new URLSearchParams(query);
      params.set('limit', String(limit));
      if (pageParam !== null) params.set('cursor', pageParam);
      return load(params);
    },
    getNextPageParam: (page) => page.next_cursor,
    select: allRows<T>,
  });
}

export const useOverview = () =>
  useQuery({
    queryKey: keys.overview,
    queryFn: () => callRoute(OWNER.overview, {}),
    refetchInterval: 30_000,
  });

export const useApiKeys = () =>
  useQuery({
    queryKey: keys.apiKeys,
    queryFn: () => callRoute(OWNER.apiKeys, {}),
  });

export const useCreateApiKey = () =>
  useChange(
    (name: string) => callRoute(OWNER.createApiKey, { body: { name } }),
    () => [keys.apiKeys],
  );

export const useRegenerateApiKey = () =>
  useChange(
    (name: string) => callRoute(OWNER.regenerateApiKey, { params: { name } }),
    () => [keys.apiKeys],
  );

export const useDeleteApiKey = () =>
  useChange(
    (name: string) => callRoute(OWNER.deleteApiKey, { params: { name } }),
    () => [keys.apiKeys],
  );

export const useAccounts = (q: string) =>
  usePages(keys.accounts, (query) => callRoute(OPERATOR.accounts, { query }), {
    limit: 50,
    query: new URLSearchParams(q === '' ? {} : { q }),
  });

export const useCreateAccount = () =>
  useChange(
    (name: string) => callRoute(OPERATOR.createAccount, { body: { name } }),
    () => [keys.accounts],
  );

export const useAccount = (id: string) =>
  useQuery({
    queryKey: keys.account(id),
    queryFn: () => callRoute(OPERATOR.account, { params: { id } }),
  });

export interface CreditInput extends DashboardCreditRequest {
  accountId: string;
  /** Chosen once per filled-in form: a repeated click or a retry credits once. */
  idempotencyKey: string;
}

export const useCredit = () =>
  useChange(
    ({ accountId, idempotencyKey, ...body }: CreditInput) =>
      callRoute(OPERATOR.credit, {
        params: { id: accountId },
        body,
        headers: { 'Idempotency-Key': idempotencyKey },
      }),
    ({ accountId }) => [keys.account(accountId)],
  );

export const useInvite = () =>
  useChange(
    ({ accountId, email }: { accountId: string; email: string }) =>
      callRoute(OPERATOR.invite, { params: { id: accountId }, body: { email } }),
    () => [],
  );
