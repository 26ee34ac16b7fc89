import {
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
  type QueryKey,
} from '@tanstack/react-query';
import { api } from './client';
import type {
  DashboardAccount,
  DashboardAccountDetail,
  DashboardAccountList,
  DashboardApiKeyCreateRequest,
  DashboardApiKeyList,
  DashboardCreditRequest,
  DashboardCreditResult,
  DashboardIssuedApiKey,
  DashboardOverview,
  InvitationCreated,
  Page,
} from './contract';

const keys = {
  overview: ['overview'] as const,
  apiKeys: ['api-keys'] as const,
  accounts: ['operator', 'accounts'] as const,
  account: (id: string) => ['operator', 'account', id] as const,
};

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

/** Cursor pages of a list endpoint, "load more" style; `data` is the rows loaded so far. */
export function usePages<T>(queryKey: readonly unknown[], path: string, limit = 20) {
  return useInfiniteQuery({
    queryKey: [...queryKey, path, limit],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) => {
      const [base, query = ''] = path.split('?');
      const params = new URLSearchParams(query);
      params.set('limit', String(limit));
      if (pageParam !== null) params.set('cursor', pageParam);
      return api<Page<T>>('GET', `${base}?${params}`);
    },
    getNextPageParam: (page) => page.next_cursor,
    select: allRows<T>,
  });
}

export const useOverview = () =>
  useQuery({
    queryKey: keys.overview,
    queryFn: () => api<DashboardOverview>('GET', '/overview'),
    refetchInterval: 30_000,
  });

export const useApiKeys = () =>
  useQuery({
    queryKey: keys.apiKeys,
    queryFn: () => api<DashboardApiKeyList>('GET', '/api-keys'),
  });

export const useCreateApiKey = () =>
  useChange(
    (name: string) =>
      api<DashboardIssuedApiKey>('POST', '/api-keys', {
        name,
      } satisfies DashboardApiKeyCreateRequest),
    () => [keys.apiKeys],
  );

export const useRegenerateApiKey = () =>
  useChange(
    (name: string) =>
      api<DashboardIssuedApiKey>('POST', `/api-keys/${segment(name)}/regenerate`, {}),
    () => [keys.apiKeys],
  );

export const useDeleteApiKey = () =>
  useChange(
    (name: string) => api<void>('DELETE', `/api-keys/${segment(name)}`),
    () => [keys.apiKeys],
  );

export const useAccounts = (q: string) =>
  usePages<RowOf<DashboardAccountList>>(
    keys.accounts,
    q === '' ? '/operator/accounts' : `/operator/accounts?q=${segment(q)}`,
    50,
  );

export const useCreateAccount = () =>
  useChange(
    (name: string) => api<DashboardAccount>('POST', '/operator/accounts', { name }),
    () => [keys.accounts],
  );

export const useAccount = (id: string) =>
  useQuery({
    queryKey: keys.account(id),
    queryFn: () => api<DashboardAccountDetail>('GET', `/operator/accounts/${segment(id)}`),
  });

export interface CreditInput extends DashboardCreditRequest {
  accountId: string;
  /** Chosen once per filled-in form: a repeated click or a retry credits once. */
  idempotencyKey: string;
}

export const useCredit = () =>
  useChange(
    ({ accountId, idempotencyKey, ...body }: CreditInput) =>
      api<DashboardCreditResult>('POST', `/operator/accounts/${segment(accountId)}/credits`, body, {
        'Idempotency-Key': idempotencyKey,
      }),
    ({ accountId }) => [keys.account(accountId)],
  );

export const useInvite = () =>
  useChange(
    ({ accountId, email }: { accountId: string; email: string }) =>
      api<InvitationCreated>('POST', `/operator/accounts/${segment(accountId)}/invitations`, {
        email,
      }),
    () => [],
  );
