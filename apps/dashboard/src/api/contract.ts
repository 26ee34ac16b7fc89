// The dashboard API's types and constants, defined once in packages/contracts.
export {
  DASHBOARD_LIMITS,
  type DashboardAccount,
  type DashboardAccountDetail,
  type DashboardAccountList,
  type DashboardApiKeyList,
  type DashboardCreditRequest,
  type DashboardCreditResult,
  type DashboardIssuedApiKey,
  type DashboardOverview,
  type DashboardRevealedWebhookSecret,
  type DashboardScopedToken,
  type DashboardSession,
  type DashboardWebhookDelivery,
  type DashboardWebhookExpirePrevious,
  type DashboardWebhookRotation,
  type DashboardWebhookSecretList,
  type DashboardWebhookSettings,
  type InvitationCreated,
  type ScopedTokenState,
} from '@gateway/contracts/dashboard-api';
export {
  type UsageGroup,
  type UsageGroupBy,
  type UsageList,
  type UsageLogEntry,
  type UsageLogPage,
} from '@gateway/contracts/usage-api';

/** The operator API's statement (`GET …/statement`), amounts in µDZD as decimal strings. */
export interface Statement {
  account_id: string;
  from: string;
  to: string;
  opening_balance_micro_dzd: string;
  total_credits_micro_dzd: string;
  total_debits_micro_dzd: string;
  closing_balance_micro_dzd: string;
  lines: StatementLine[];
}

export interface StatementLine {
  entry_id: string;
  transaction_id: string;
  kind: string;
  reference: string | null;
  hold_id: string | null;
  created_at: string;
  amount_micro_dzd: string;
  balance_after_micro_dzd: string;
}

/** One ledger entry as the operator API lists it. */
export interface LedgerEntry {
  id: string;
  transaction_id: string;
  account_id: string | null;
  kind: string;
  reference: string | null;
  created_at: string;
  amount_micro_dzd: string;
}

export interface Page<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

export interface LedgerCheck {
  ok: boolean;
  violations: string[];
}

/** A model node with what workers last observed of it (issue 16). */
export interface CatalogNode {
  url: string;
  weight?: number;
  health?: 'healthy' | 'down' | 'unknown';
  observed_at?: string | null;
  last_error_kind?: string | null;
}

/*
 * The catalog's media fields, as `packages/contracts/src/catalog-api.ts` defines them (not
 * imported: that module pulls in node-only code through the envelopes).
 */

/** The content parts a model accepts in chat messages (`input_modalities`); `text` always. */
export const INPUT_MODALITIES = ['text', 'image', 'audio', 'file'] as const;
export type InputModality = (typeof INPUT_MODALITIES)[number];

/** What `PUT /admin/v1/models/{id}` takes when a media field is omitted. */
export const MODEL_MEDIA_DEFAULTS = {
  input_modalities: ['text'] as InputModality[],
  image_tokens: 1445,
  remote_images: false,
};
export const IMAGE_TOKENS_MAX = 100_000;

/** A catalog model as the operator API answers it (prices in DZD per million tokens). */
export interface CatalogModel {
  id: string;
  kind: string;
  provider: string;
  upstream_model: string;
  input_price_dzd_per_m: number;
  output_price_dzd_per_m: number;
  max_output_tokens: number;
  protocol?: string;
  nodes?: CatalogNode[];
  /** Absent from a server older than the media fields (then: the defaults). */
  input_modalities?: InputModality[];
  /** The per-image token ceiling the hold counts for each image part (1–100 000). */
  image_tokens?: number;
  /** Image parts may reference http(s) URLs (forwarded as sent); else `data:` URLs only. */
  remote_images?: boolean;
  [field: string]: unknown;
}
