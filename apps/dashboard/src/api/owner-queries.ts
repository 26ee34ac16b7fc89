import { useQuery } from '@tanstack/react-query';
import { DASHBOARD_OPERATOR_ROUTES as OPERATOR } from '@gateway/contracts/dashboard-operator-routes';
import { DASHBOARD_OWNER_ROUTES as R } from '@gateway/contracts/dashboard-owner-routes';
import { callRoute, routeHref } from './client';
import type { DashboardWebhookSettings, ScopedTokenCreateRequest, UsageGroupBy } from './contract';
import { useChange, usePages } from './queries';

/*
 * An owner's scoped tokens, webhooks, usage and statement (contract: DASHBOARD_OWNER_ROUTES),
 * and operators' usage and statements of any account (DASHBOARD_OPERATOR_ROUTES), which have the
 * same shapes.
 */

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
  usePages(keys.scopedTokens, (query) => callRoute(R.scopedTokens, { query }));

/** `POST /v1/scoped-jwt`'s body. */
export type ScopedTokenInput = ScopedTokenCreateRequest;

export const useCreateScopedToken = () =>
  useChange(
    (body: ScopedTokenInput) => callRoute(R.createScopedToken, { body }),
    () => [keys.scopedTokens],
  );

export const useRevokeScopedToken = () =>
  useChange(
    (id: string) => callRoute(R.revokeScopedToken, { params: { id } }),
    () => [keys.scopedTokens],
  );

export const useWebhookSecrets = () =>
  useQuery({
    queryKey: keys.secrets,
    queryFn: () => callRoute(R.webhookSecrets, {}),
  });

export const useRevealSecrets = () =>
  useChange(
    () => callRoute(R.revealWebhookSecrets, {}),
    () => [],
  );

export const useRotateSecret = () =>
  useChange(
    () => callRoute(R.rotateWebhookSecret, {}),
    () => [keys.secrets],
  );

/** Ends the previous secret's rotation window now: only the current secret signs. */
export const useExpirePreviousSecret = () =>
  useChange(
    () => callRoute(R.expirePreviousWebhookSecret, {}),
    () => [keys.secrets],
  );

export const useWebhookSettings = () =>
  useQuery({
    queryKey: keys.settings,
    queryFn: () => callRoute(R.webhookSettings, {}),
  });

export const useSaveWebhookSettings = () =>
  useChange(
    (body: DashboardWebhookSettings) => callRoute(R.putWebhookSettings, { body }),
    () => [keys.settings],
  );

export const useDeliveries = () =>
  usePages(keys.deliveries, (query) => callRoute(R.webhookDeliveries, { query }));

export const useRedeliver = () =>
  useChange(
    (id: string) => callRoute(R.redeliverWebhook, { params: { id } }),
    () => [keys.deliveries],
  );

const rangeQuery = (range: Range) => new URLSearchParams({ from: range.from, to: range.to });

/**
 * Whose usage: the owner's own (`own`), or operators' (`operator`) across accounts or of the one
 * account id in `account`.
 */
export interface UsageScope {
  whose: 'own' | 'operator';
  account: string;
}
export const OWN_USAGE: UsageScope = { whose: 'own', account: '' };

const scopedQuery = (range: Range, scope: UsageScope) => {
  const params = rangeQuery(range);
  if (scope.account !== '') params.set('account', scope.account);
  return params;
};

/** The scope's usage: the owner's route or the operators' (the same answers). */
const usageOf = (scope: UsageScope, query: URLSearchParams) =>
  scope.whose === 'own' ? callRoute(R.usage, { query }) : callRoute(OPERATOR.usage, { query });

const requestLogOf = (scope: UsageScope, query: URLSearchParams) =>
  scope.whose === 'own'
    ? callRoute(R.usageRequests, { query })
    : callRoute(OPERATOR.usageRequests, { query });

export const useUsage = (range: Range, groupBy: UsageGroupBy, scope = OWN_USAGE) =>
  useQuery({
    queryKey: ['usage', scope.whose, scope.account, groupBy, range.from, range.to],
    queryFn: () => {
      const query = scopedQuery(range, scope);
      query.set('group_by', groupBy);
      return usageOf(scope, query);
    },
  });

export const useRequestLog = (range: Range, scope = OWN_USAGE) =>
  usePages(['usage', 'requests', scope.whose], (query) => requestLogOf(scope, query), {
    limit: 50,
    query: scopedQuery(range, scope),
  });

/** A request's receipt, by its job id or X-Request-Id: the owner's own requests. */
export const useReceipt = (id: string) =>
  useQuery({
    queryKey: ['usage', 'receipt', id],
    queryFn: () => callRoute(R.receipt, { params: { requestId: id } }),
  });

/** With `?format=csv`: a download link's query. */
const asCsv = (query: URLSearchParams) => {
  query.set('format', 'csv');
  return query;
};

/** The request log's CSV download (a plain link: the session cookie goes with it). */
export const requestLogCsvHref = (range: Range, scope = OWN_USAGE): string => {
  const query = asCsv(scopedQuery(range, scope));
  return scope.whose === 'own'
    ? routeHref(R.usageRequests, { query })
    : routeHref(OPERATOR.usageRequests, { query });
};

/** Whose statement: the session's own account (null, owners) or the account of that id. */
export type StatementAccount = string | null;

const statementOf = (account: StatementAccount, range: Range) =>
  account === null
    ? callRoute(R.statement, { query: rangeQuery(range) })
    : callRoute(OPERATOR.statement, { params: { id: account }, query: rangeQuery(range) });

/** The statement's CSV download. */
export const statementCsvHref = (account: StatementAccount, range: Range): string => {
  const query = asCsv(rangeQuery(range));
  return account === null
    ? routeHref(R.statement, { query })
    : routeHref(OPERATOR.statement, { params: { id: account }, query });
};

export const useStatement = (account: StatementAccount, range: Range) =>
  useQuery({
    queryKey: ['statement', account, range.from, range.to],
    queryFn: () => statementOf(account, range),
  });
