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
  DashboardApiKeyList,
  DashboardCreditRequest,
  DashboardCreditResult,
  DashboardIssuedApiKey,
  DashboardOverview,
  InvitationCreated,
} from './contract';

const keys = {
  overview: ['overview'] as const,
  apiKeys: ['api-keys'] as const,
  accounts: (q: string) => ['operator', 'accounts', q] as const,
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
    (name: string) => api<DashboardIssuedApiKey>('POST', '/api-keys', { name }),
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
  useInfiniteQuery({
    queryKey: keys.accounts(q),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) => {
      const params = new URLSearchParams({ limit: '50' });
      if (q !== '') params.set('q', q);
      if (pageParam !== null) params.set('cursor', pageParam);
      return api<DashboardAccountList>('GET', `/operator/accounts?${params}`);
    },
    getNextPageParam: (page) => page.next_cursor,
  });

export const useCreateAccount = () =>
  useChange(
    (name: string) => api<DashboardAccount>('POST', '/operator/accounts', { name }),
    () => [['operator', 'accounts']],
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
