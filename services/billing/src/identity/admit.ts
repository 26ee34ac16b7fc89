/**
 * Admission's request and answer types, its refusals (codes and messages), and the admission
 * function's row read as the answer, for `PgAdmission`: the decisions themselves are taken in
 * SQL (`billing_admit_v2`, prisma/functions/billing_admit_v2.sql), in the order of the spec's
 * error table.
 */
import { GatewayError, LIMITS } from '@gateway/contracts';
import type {
  ChatMediaUse,
  InputModality,
  MediaKind,
  MediaUse,
  RateLimitDecision,
} from '@gateway/contracts';
import type { CatalogModel, ModelKind, ModelNode, ModelProvider } from './types.js';

/** The hold admission placed. */
export interface PlacedHold {
  id: string;
  amountMicroDzd: bigint;
  expiresAt: Date;
  /** The hold already existed under the caller's id (a retried admission): nothing new. */
  replayed: boolean;
}

/** What an inference request asks of admission (the credential travels beside it). */
export interface AdmitRequest {
  /** Catalog model id, as the client wrote it. */
  model: string;
  estimate: {
    /** Prompt tokens, counted with a real tokenizer. */
    inputTokens: number;
    /**
     * Output cap per choice requested by the client (`max_tokens`, `max_new_tokens`...).
     * Omitted/null: the model's `max_output_tokens`. Never more than the model's cap.
     */
    maxOutputTokens?: number | null;
    /** Choices generated (`n`); 1 by default. The output cap is reserved for each. */
    choices?: number;
  };
  /** `service_tier: "priority"`: +20%. */
  priority: boolean;
  /** The hold's id, caller-chosen (e.g. from the request id) for idempotent retries. */
  holdId?: string;
  /**
   * Providers the calling endpoint may use (e.g. `['node']` on the default-models-only routes);
   * any when omitted. A model of another provider is 404 `model_not_found`, decided at the model
   * step, so no hold is placed.
   */
  providers?: readonly ModelProvider[];
  /** Model kinds the calling endpoint serves (e.g. `['embedding']`); any when omitted. */
  kinds?: readonly ModelKind[];
  /**
   * The first (sorted) request parameter default models do not accept, as edge found it: a model
   * of provider `node` is then refused with 400 `invalid_request_body` naming it, before the
   * token's model list and the hold. External-provider models drop such parameters with a warning.
   */
  nodeUnsupportedParameter?: string;
  /**
   * Chat content beyond text (issue 21): a kind the model does not declare is refused with 400
   * naming its first part, at the same step; every image adds the model's `imageTokens` to the
   * input of the worst case.
   */
  media?: ChatMediaUse;
}

export interface Admission {
  hold: PlacedHold;
  model: CatalogModel;
  /** The worst case reserved: input + choices × output cap at the model's rates (× 1.2). */
  worstCaseMicroDzd: bigint;
  /** Output tokens the worst case was sized for (all choices). */
  reservedOutputTokens: number;
  /** For the `X-RateLimit-*` headers. */
  rateLimit: RateLimitDecision;
}

export const modelNotOnEndpoint = (id: string): GatewayError =>
  new GatewayError('model_not_found', `Model '${id}' is not available on this endpoint`, {
    param: 'model',
  });

export const modelNotAllowed = (id: string, allowed: readonly string[]): GatewayError =>
  new GatewayError(
    'model_not_allowed',
    `Model '${id}' is not allowed for this scoped token. Allowed models: ${allowed.join(', ')}`,
    { param: 'model' },
  );

/** The reference API's wording for an unknown argument. */
export const unsupportedParameter = (name: string): GatewayError =>
  new GatewayError('invalid_request_body', `Unrecognized request argument supplied: ${name}`, {
    param: name,
  });

/** 400 naming the first part of a kind the model does not read, before any hold. */
export function unsupportedContent(
  model: Pick<CatalogModel, 'id' | 'inputModalities'>,
  use: MediaUse,
): GatewayError {
  const message =
    use.kind === 'remote_image'
      ? `Model '${model.id}' takes images only as data: URLs (data:image/...;base64,...)`
      : `Model '${model.id}' does not take ${use.kind} input; it reads: ` +
        model.inputModalities.join(', ');
  return new GatewayError('invalid_request_body', message, { param: use.param });
}

export function withRateLimit(error: GatewayError, rateLimit: RateLimitDecision): GatewayError {
  return new GatewayError(error.code, error.message, {
    ...(error.param === undefined ? {} : { param: error.param }),
    details: { ...error.details, rateLimit },
    cause: error,
  });
}

export function checkEstimate(estimate: AdmitRequest['estimate']) {
  const bad = (field: string) =>
    new GatewayError('invalid_request_body', `estimate.${field} must be a non-negative integer`, {
      param: field,
    });
  const { inputTokens, maxOutputTokens = null, choices = 1 } = estimate;
  if (!Number.isSafeInteger(inputTokens) || inputTokens < 0) throw bad('inputTokens');
  if (
    maxOutputTokens !== null &&
    (!Number.isSafeInteger(maxOutputTokens) ||
      maxOutputTokens < 0 ||
      maxOutputTokens > LIMITS.tokensMax)
  ) {
    throw bad('maxOutputTokens');
  }
  if (!Number.isSafeInteger(choices) || choices < 1 || choices > LIMITS.nMax) throw bad('choices');
  return { inputTokens, maxOutputTokens, choices };
}

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
