import { useQuery } from '@tanstack/react-query';
import type { ModelPutRequest } from '@gateway/contracts/catalog-api';
import { DASHBOARD_OPERATOR_ROUTES as R } from '@gateway/contracts/dashboard-operator-routes';
import { DASHBOARD_ACCOUNT_ROUTES } from '@gateway/contracts/dashboard-routes';
import { callRoute } from './client';
import type { CatalogModel } from './contract';
import { useChange, usePages } from './queries';

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
    queryFn: () => callRoute(R.models, {}),
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
      callRoute(R.putModel, { params: { model: model.id }, body: modelPutBody(model, change) }),
    () => [keys.models],
  );

export const useLedgerEntries = (account: string) =>
  usePages(['operator', 'ledger-entries'], (query) => callRoute(R.ledgerEntries, { query }), {
    limit: 50,
    query: new URLSearchParams(account === '' ? {} : { account }),
  });

export const useLedgerCheck = () =>
  useQuery({
    queryKey: keys.check,
    queryFn: () => callRoute(R.ledgerCheck, {}),
  });

export const useAccountDeliveries = (id: string) =>
  usePages(['operator', 'deliveries', id], (query) =>
    callRoute(R.webhookDeliveries, { params: { id }, query }),
  );

/** The account's open holds: what its reserved total is made of. */
export const useOpenHolds = (id: string) =>
  useQuery({
    queryKey: [...keys.account(id), 'holds'],
    queryFn: () => callRoute(R.openHolds, { params: { id } }),
  });

export const useSuspend = () =>
  useChange(
    ({ id, action }: { id: string; action: 'suspend' | 'unsuspend' }) =>
      callRoute(action === 'suspend' ? R.suspend : R.unsuspend, { params: { id } }),
    ({ id }) => [keys.account(id)],
  );

export const useRateLimit = () =>
  useChange(
    ({ id, perMinute }: { id: string; perMinute: number }) =>
      callRoute(R.patchAccount, { params: { id }, body: { rate_limit_per_minute: perMinute } }),
    ({ id }) => [keys.account(id)],
  );
