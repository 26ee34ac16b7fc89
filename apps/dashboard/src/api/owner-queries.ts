import { useQuery } from '@tanstack/react-query';
import { api } from './client';
import { DASHBOARD_API_PREFIX } from '@gateway/contracts/dashboard-api';
import type {
  DashboardRevealedWebhookSecret,
  DashboardScopedToken,
  DashboardScopedTokenList,
  DashboardWebhookDelivery,
  DashboardWebhookDeliveryList,
  DashboardWebhookExpirePrevious,
  DashboardWebhookRotation,
  DashboardWebhookSecretList,
  DashboardWebhookSettings,
  Receipt,
  Statement,
  UsageGroupBy,
  UsageList,
  UsageLogPage,
  ScopedTokenCreateRequest,
} from './contract';
import { segment, useChange, usePages, type RowOf } from './queries';

/** A date range as the API takes it: RFC 3339 instants, `[from, to)`. */
export interface Range {
  from: string;
  to: string;
}

const keys = {
  scopedTokens: ['scoped-tokens'] as const,
  secrets: ['webhooks', 'secrets'] as const,
  settings: ['webhooks', 'settings'] as const,
  deliveries: ['webhooks', 'deliveries'] as const,
};

export const useScopedTokens = () =>
  usePages<RowOf<DashboardScopedTokenList>>(keys.scopedTokens, '/scoped-tokens');

/** `POST /v1/scoped-jwt`'s body. */
export type ScopedTokenInput = ScopedTokenCreateRequest;

export const useCreateScopedToken = () =>
  useChange(
    (body: ScopedTokenInput) => api<{ token: string }>('POST', '/scoped-tokens', body),
    () => [keys.scopedTokens],
  );

export const useRevokeScopedToken = () =>
  useChange(
    (id: string) => api<DashboardScopedToken>('POST', `/scoped-tokens/${segment(id)}/revoke`, {}),
    () => [keys.scopedTokens],
  );

export const useWebhookSecrets = () =>
  useQuery({
    queryKey: keys.secrets,
    queryFn: () => api<DashboardWebhookSecretList>('GET', '/webhooks/secrets'),
  });

export const useRevealSecrets = () =>
  useChange(
    () => api<{ data: DashboardRevealedWebhookSecret[] }>('POST', '/webhooks/secrets/reveal', {}),
    () => [],
  );

export const useRotateSecret = () =>
  useChange(
    () => api<DashboardWebhookRotation>('POST', '/webhooks/secrets/rotate', {}),
    () => [keys.secrets],
  );

/** Ends the previous secret's rotation window now: only the current secret signs. */
export const useExpirePreviousSecret = () =>
  useChange(
    () => api<DashboardWebhookExpirePrevious>('POST', '/webhooks/secrets/expire-previous', {}),
    () => [keys.secrets],
  );

export const useWebhookSettings = () =>
  useQuery({
    queryKey: keys.settings,
    queryFn: () => api<DashboardWebhookSettings>('GET', '/webhooks/settings'),
  });

export const useSaveWebhookSettings = () =>
  useChange(
    (body: DashboardWebhookSettings) =>
      api<DashboardWebhookSettings>('PUT', '/webhooks/settings', body),
    () => [keys.settings],
  );

export const useDeliveries = () =>
  usePages<RowOf<DashboardWebhookDeliveryList>>(keys.deliveries, '/webhooks/deliveries');

export const useRedeliver = () =>
  useChange(
    (id: string) =>
      api<DashboardWebhookDelivery>('POST', `/webhooks/deliveries/${segment(id)}/redeliver`, {}),
    () => [keys.deliveries],
  );

const rangeQuery = (range: Range) => new URLSearchParams({ from: range.from, to: range.to });

/**
 * Whose usage: the owner's own (prefix ''), or operators' (prefix '/operator') across accounts
 * or of the one account id in `account`.
 */
export interface UsageScope {
  prefix: '' | '/operator';
  account: string;
}
export const OWN_USAGE: UsageScope = { prefix: '', account: '' };

const scopedQuery = (range: Range, scope: UsageScope) => {
  const params = rangeQuery(range);
  if (scope.account !== '') params.set('account', scope.account);
  return params;
};

export const useUsage = (range: Range, groupBy: UsageGroupBy, scope = OWN_USAGE) =>
  useQuery({
    queryKey: ['usage', scope.prefix, scope.account, groupBy, range.from, range.to],
    queryFn: () => {
      const params = scopedQuery(range, scope);
      params.set('group_by', groupBy);
      return api<UsageList>('GET', `${scope.prefix}/usage?${params}`);
    },
  });

export const useRequestLog = (range: Range, scope = OWN_USAGE) =>
  usePages<RowOf<UsageLogPage>>(
    ['usage', 'requests'],
    `${scope.prefix}/usage/requests?${scopedQuery(range, scope)}`,
    50,
  );

/** A request's receipt, by its job id or X-Request-Id: the owner's own requests. */
export const useReceipt = (id: string) =>
  useQuery({
    queryKey: ['usage', 'receipt', id],
    queryFn: () => api<Receipt>('GET', `/usage/requests/${segment(id)}`),
  });

/** The CSV download's address (a plain link: the session cookie goes with it). */
export const csvHref = (path: string, range: Range, scope = OWN_USAGE): string =>
  `${DASHBOARD_API_PREFIX}${scope.prefix}${path}?${scopedQuery(range, scope)}&format=csv`;

export const useStatement = (path: string, range: Range) =>
  useQuery({
    queryKey: ['statement', path, range.from, range.to],
    queryFn: () => api<Statement>('GET', `${path}?${rangeQuery(range)}`),
  });
