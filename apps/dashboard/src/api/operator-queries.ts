import { useQuery } from '@tanstack/react-query';
import type { ModelPutRequest } from '@gateway/contracts/catalog-api';
import { DASHBOARD_ACCOUNT_ROUTES } from '@gateway/contracts/dashboard-routes';
import { api, callRoute } from './client';
import type {
  CatalogModel,
  DashboardAccount,
  DashboardAccountPatchRequest,
  DashboardCatalogModelList,
  LedgerCheck,
  DashboardLedgerEntryPage,
  DashboardWebhookDeliveryList,
} from './contract';
import { segment, useChange, usePages, type RowOf } from './queries';

const keys = {
  models: ['operator', 'models'] as const,
  check: ['operator', 'ledger-check'] as const,
  account: (id: string) => ['operator', 'account', id] as const,
};

/** How many of an account's scoped tokens its page lists (the newest). */
export const ACCOUNT_TOKENS_SHOWN = 50;

/** An account's newest scoped tokens, with the ids their budgets and rate limits are set by. */
export const useAccountScopedTokens = (id: string) =>
  useQuery({
    queryKey: [...keys.account(id), 'scoped-tokens'],
    queryFn: () =>
      callRoute(DASHBOARD_ACCOUNT_ROUTES.scopedTokens, {
        params: { id },
        query: new URLSearchParams({ limit: String(ACCOUNT_TOKENS_SHOWN) }),
      }),
  });

export const useModels = () =>
  useQuery({
    queryKey: keys.models,
    queryFn: () => api<DashboardCatalogModelList>('GET', '/operator/models'),
  });

/** The fields `PUT /operator/models/{id}` takes (a closed schema): the rest is the server's. */
function modelPutBody(model: CatalogModel, change: Partial<CatalogModel>): ModelPutRequest {
  const next = { ...model, ...change };
  return {
    kind: next.kind,
    provider: next.provider,
    ...(typeof next.protocol === 'string' ? { protocol: next.protocol } : {}),
    upstream_model: next.upstream_model,
    input_price_dzd_per_m: next.input_price_dzd_per_m,
    output_price_dzd_per_m: next.output_price_dzd_per_m,
    max_output_tokens: next.max_output_tokens,
    // PUT replaces the model: a field left out is reset to its default, so send what we have.
    ...(Array.isArray(next.input_modalities) ? { input_modalities: next.input_modalities } : {}),
    ...(typeof next.image_tokens === 'number' ? { image_tokens: next.image_tokens } : {}),
    ...(typeof next.remote_images === 'boolean' ? { remote_images: next.remote_images } : {}),
    ...(next.nodes === undefined
      ? {}
      : {
          nodes: next.nodes.map((node) => ({
            url: node.url,
            ...(typeof node.weight === 'number' ? { weight: node.weight } : {}),
          })),
        }),
  };
}

export const useSaveModel = () =>
  useChange(
    ({ model, change }: { model: CatalogModel; change: Partial<CatalogModel> }) =>
      api<CatalogModel>(
        'PUT',
        `/operator/models/${model.id.split('/').map(segment).join('/')}`,
        modelPutBody(model, change),
      ),
    () => [keys.models],
  );

export const useLedgerEntries = (account: string) =>
  usePages<RowOf<DashboardLedgerEntryPage>>(
    ['operator', 'ledger-entries'],
    `/operator/ledger/entries${account === '' ? '' : `?account=${segment(account)}`}`,
    50,
  );

export const useLedgerCheck = () =>
  useQuery({
    queryKey: keys.check,
    queryFn: () => api<LedgerCheck>('GET', '/operator/ledger/check'),
  });

export const useAccountDeliveries = (id: string) =>
  usePages<RowOf<DashboardWebhookDeliveryList>>(
    ['operator', 'deliveries', id],
    `/operator/accounts/${segment(id)}/webhook-deliveries`,
  );

export const useSuspend = () =>
  useChange(
    ({ id, action }: { id: string; action: 'suspend' | 'unsuspend' }) =>
      api<DashboardAccount>('POST', `/operator/accounts/${segment(id)}/${action}`, {}),
    ({ id }) => [keys.account(id)],
  );

export const useRateLimit = () =>
  useChange(
    ({ id, perMinute }: { id: string; perMinute: number }) =>
      api<DashboardAccount>('PATCH', `/operator/accounts/${segment(id)}`, {
        rate_limit_per_minute: perMinute,
      } satisfies DashboardAccountPatchRequest),
    ({ id }) => [keys.account(id)],
  );
