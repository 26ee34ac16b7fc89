/**
 * The admission function as a call on a `pg` pool (named prepared statement, no ORM), for the
 * services that admit requests: billing (API keys and scoped tokens) and edge (API keys, ADR
 * 0070). A batch of admissions is one statement and one transaction; each item's row is read
 * by admission-answer.ts.
 */
import type { InputModality, MediaKind } from '@gateway/contracts';
import type pg from 'pg';
import type { CheckedAdmitRequest, ModelRecord } from './admission-types.js';
import { windowStartMs } from './rate-windows.js';

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
  /** The API key's own model list (null: any model). */
  key_models: string[] | null;
  token_limit: Int8;
  token_spent: Int8;
  token_reserved: Int8;
  token_expires_at: Date | null;
  model_id: string | null;
  model_kind: ModelRecord['kind'] | null;
  model_provider: ModelRecord['provider'] | null;
  model_protocol: ModelRecord['protocol'] | null;
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
  /** `budget_exhausted` by a budget: whose, its numbers and when it resets. */
  budget_scope: 'api_key' | 'scoped_token' | null;
  budget_limit: Int8;
  budget_spent: Int8;
  budget_reserved: Int8;
  budget_period: string | null;
  budget_resets_at: Date | null;
  /** Per-key rate limits: the key's and token's limits and window counts. */
  key_requests_per_minute: number | null;
  key_window_count: number | null;
  token_requests_per_minute: number | null;
  token_window_count: number | null;
  key_tokens_per_minute: Int8;
  key_tokens_used: Int8;
  token_tokens_per_minute: Int8;
  token_tokens_used: Int8;
  /** The request's tokens (what the hold is sized for), counted against tokens per minute. */
  rate_tokens: Int8;
  /** When the call was made (the clock's time), for the rate-limit numbers. */
  nowMs: number;
}

/** The columns of a `billing_admit` row, as the statement returns them. */
export type AdmitColumns = Omit<AdmitRow, 'nowMs'>;

/** An admission's request: `billing_admission_request`'s fields (batchItem names them). */
export interface AdmitStatementParams {
  keyDigest: string | null;
  accountId: string | null;
  signingKeyId: string | null;
  signingKeyDigest: string | null;
  tokenDigest: string | null;
  tokenModels: readonly string[] | null;
  tokenLimitMicroDzd: bigint | null;
  tokenExpiresAt: Date | null;
  newTokenId: string | null;
  windowStartMs: number;
  model: string;
  inputTokens: number;
  maxOutputTokens: number | null;
  choices: number;
  priority: boolean;
  providers: readonly string[] | null;
  kinds: readonly string[] | null;
  nodeUnsupported: string | null;
  mediaKinds: readonly string[] | null;
  imageCount: number;
  holdId: string;
  holdExpiresAt: Date;
  now: Date;
  endpoint: string | null;
  requestId: string | null;
}

/** A scoped token's fields of an admission, set once billing verified its signature. */
export type TokenStatementParams = Pick<
  AdmitStatementParams,
  | 'accountId'
  | 'signingKeyId'
  | 'signingKeyDigest'
  | 'tokenDigest'
  | 'tokenModels'
  | 'tokenLimitMicroDzd'
  | 'tokenExpiresAt'
  | 'newTokenId'
>;

/** An API key's admission: no scoped token. */
export const NO_TOKEN: TokenStatementParams = {
  accountId: null,
  signingKeyId: null,
  signingKeyDigest: null,
  tokenDigest: null,
  tokenModels: null,
  tokenLimitMicroDzd: null,
  tokenExpiresAt: null,
  newTokenId: null,
};

/** The statement's fields for a credential (an API key's digest, or a token's fields). */
export function statementParams(
  credential: { keyDigest: string | null; token: TokenStatementParams },
  request: CheckedAdmitRequest,
  at: { now: Date; holdTtlMs: number },
): AdmitStatementParams {
  const { now } = at;
  return {
    keyDigest: credential.keyDigest,
    ...credential.token,
    windowStartMs: windowStartMs(now.getTime()),
    model: request.model,
    inputTokens: request.estimate.inputTokens,
    maxOutputTokens: request.estimate.maxOutputTokens,
    choices: request.estimate.choices,
    priority: request.priority,
    providers: request.providers ?? null,
    kinds: request.kinds ?? null,
    nodeUnsupported: request.nodeUnsupportedParameter ?? null,
    mediaKinds: request.media?.kinds.map((use) => use.kind) ?? null,
    imageCount: request.media?.imageCount ?? 0,
    holdId: request.holdId,
    holdExpiresAt: new Date(now.getTime() + at.holdTtlMs),
    now,
    endpoint: request.endpoint ?? null,
    requestId: request.requestId ?? null,
  };
}

/**
 * Admissions in one statement, so in one transaction: `billing_admit_batch_v1` (billing, every
 * credential) or `billing_admit_api_keys_v1` (edge's role, API keys only, ADR 0070), one row per
 * item in the items' order. The order in which the items are admitted (by account, so that
 * batches cannot deadlock) is the function's: prisma/functions/billing_admit_batch_v1.sql in
 * billing.
 */
const ADMIT_FUNCTIONS = {
  batch: {
    name: 'billing_admit_batch_v1',
    text: 'SELECT * FROM billing_admit_batch_v1($1::jsonb)',
  },
  api_keys: {
    name: 'billing_admit_api_keys_v1',
    text: 'SELECT * FROM billing_admit_api_keys_v1($1::jsonb)',
  },
} as const;

/** Which admission function: every credential (billing's role), or API keys only (edge's). */
export type AdmitFunction = keyof typeof ADMIT_FUNCTIONS;

/** One item of the batch statement: `billing_admission_request`'s fields by name. */
function batchItem(p: AdmitStatementParams) {
  return {
    key_digest: p.keyDigest,
    account_id: p.accountId,
    signing_key_id: p.signingKeyId,
    signing_key_digest: p.signingKeyDigest,
    token_digest: p.tokenDigest,
    token_models: p.tokenModels,
    // µDZD as a string: JSON numbers lose precision above 2^53.
    token_limit: p.tokenLimitMicroDzd?.toString() ?? null,
    token_expires_at: p.tokenExpiresAt?.toISOString() ?? null,
    new_token_id: p.newTokenId,
    window_start_ms: p.windowStartMs,
    model: p.model,
    input_tokens: p.inputTokens,
    max_output_tokens: p.maxOutputTokens,
    choices: p.choices,
    priority: p.priority,
    providers: p.providers,
    kinds: p.kinds,
    node_unsupported: p.nodeUnsupported,
    media_kinds: p.mediaKinds,
    image_count: p.imageCount,
    hold_id: p.holdId,
    hold_expires_at: p.holdExpiresAt.toISOString(),
    now_at: p.now.toISOString(),
    endpoint: p.endpoint,
    request_id: p.requestId,
  };
}

/**
 * Admissions in one round trip and one transaction: each item's row, in the items' order. One
 * failing item fails the statement: `admitRows` then runs its items one by one.
 */
export async function admitBatchStatement(
  pool: pg.Pool,
  items: readonly AdmitStatementParams[],
  fn: AdmitFunction = 'batch',
): Promise<AdmitColumns[]> {
  const { rows } = await pool.query<AdmitColumns>({
    ...ADMIT_FUNCTIONS[fn],
    values: [JSON.stringify(items.map((item) => batchItem(item)))],
  });
  if (rows.length !== items.length) {
    throw new Error(`billing_admit: ${rows.length} rows for ${items.length} items`);
  }
  return rows;
}

/**
 * Each item's row (or why it has none): from one statement, or item by item when the statement
 * failed as a whole (a defect or a fault in one item), so that only the failing item fails;
 * nothing of the failed statement was kept.
 */
export async function admitRows(
  pool: pg.Pool,
  params: readonly AdmitStatementParams[],
  nowMs: number,
  fn: AdmitFunction = 'batch',
): Promise<(AdmitRow | Error)[]> {
  if (params.length === 0) return [];
  const rowsOf = (columns: readonly AdmitColumns[]) => columns.map((row) => ({ ...row, nowMs }));
  try {
    return rowsOf(await admitBatchStatement(pool, params, fn));
  } catch (error) {
    if (params.length === 1) return [asError(error)];
  }
  const rows: (AdmitRow | Error)[] = [];
  for (const one of params) {
    try {
      rows.push(...rowsOf(await admitBatchStatement(pool, [one], fn)));
    } catch (error) {
      rows.push(asError(error));
    }
  }
  return rows;
}

const asError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));
