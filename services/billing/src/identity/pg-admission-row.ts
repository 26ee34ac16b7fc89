import type { InputModality, MediaKind, RateLimitDecision } from '@gateway/contracts';
import type { Admission } from './admit.js';
import type { CatalogModel, ModelNode } from './types.js';

type Int8 = string | null;

/** One row of `billing_admit` (int8 columns arrive as text and are read as bigint). */
export interface AdmitRow {
  outcome: string;
  account_id: string | null;
  api_key_name: string | null;
  account_status: string | null;
  rate_limit_per_minute: number | null;
  webhook_format: string | null;
  key_digest: string | null;
  window_count: number | null;
  token_id: string | null;
  token_models: string[] | null;
  token_limit: Int8;
  token_spent: Int8;
  token_reserved: Int8;
  token_expires_at: Date | null;
  model_id: string | null;
  model_kind: CatalogModel['kind'] | null;
  model_provider: CatalogModel['provider'] | null;
  model_protocol: CatalogModel['protocol'] | null;
  model_upstream: string | null;
  model_input_price: Int8;
  model_output_price: Int8;
  model_max_output_tokens: number | null;
  model_nodes: unknown;
  model_updated_at: Date | null;
  reserved_output_tokens: number | null;
  worst_case_micro_dzd: Int8;
  hold_id: string | null;
  hold_amount_micro_dzd: Int8;
  hold_expires_at: Date | null;
  hold_status: string | null;
  /** `unsupported_content`: the first kind of content the model does not declare. */
  refused_media_kind: MediaKind | null;
  model_input_modalities: InputModality[] | null;
  model_image_tokens: number | null;
  model_remote_images: boolean | null;
  /** When the call was made (the clock's time), for the rate-limit numbers. */
  nowMs: number;
}

function required<T>(value: T | null, column: string): T {
  if (value === null) throw new Error(`billing_admit: ${column} missing on an admission`);
  return value;
}

function modelOf(row: AdmitRow): CatalogModel {
  return {
    id: required(row.model_id, 'model_id'),
    kind: required(row.model_kind, 'model_kind'),
    provider: required(row.model_provider, 'model_provider'),
    protocol: required(row.model_protocol, 'model_protocol'),
    upstreamModel: required(row.model_upstream, 'model_upstream'),
    inputPriceMicroDzdPerM: BigInt(required(row.model_input_price, 'model_input_price')),
    outputPriceMicroDzdPerM: BigInt(required(row.model_output_price, 'model_output_price')),
    maxOutputTokens: required(row.model_max_output_tokens, 'model_max_output_tokens'),
    // Validated on the way in (catalog.ts); stored as a JSON array.
    nodes: (Array.isArray(row.model_nodes) ? row.model_nodes : []) as ModelNode[],
    inputModalities: required(row.model_input_modalities, 'model_input_modalities'),
    imageTokens: required(row.model_image_tokens, 'model_image_tokens'),
    remoteImages: required(row.model_remote_images, 'model_remote_images'),
    updatedAt: required(row.model_updated_at, 'model_updated_at'),
  };
}

/** An `admitted` or `replayed` row as the domain's Admission. */
export function toAdmissionRow(row: AdmitRow, rateLimit: RateLimitDecision): Admission {
  return {
    hold: {
      id: required(row.hold_id, 'hold_id'),
      amountMicroDzd: BigInt(required(row.hold_amount_micro_dzd, 'hold_amount_micro_dzd')),
      expiresAt: required(row.hold_expires_at, 'hold_expires_at'),
      replayed: row.outcome === 'replayed',
    },
    model: modelOf(row),
    worstCaseMicroDzd: BigInt(required(row.worst_case_micro_dzd, 'worst_case_micro_dzd')),
    reservedOutputTokens: required(row.reserved_output_tokens, 'reserved_output_tokens'),
    rateLimit,
  };
}
