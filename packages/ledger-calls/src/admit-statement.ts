/**
 * The admission function as a call on a `pg` pool (named prepared statement, no ORM), for the
 * services that admit requests: billing (API keys and scoped tokens) and edge (API keys, ADR
 * 0070). A batch of admissions is one statement and one transaction; each item's row is read
 * by admission-answer.ts.
 */
import type { InputModality, MediaKind } from '@gateway/contracts';
import type pg from 'pg';
import type { ModelRecord } from './admission-types.js';

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

/**
 * Admissions in one statement, so in one transaction: each item is one call of
 * `billing_admit_v5` (admission as steps over the composite types `billing_admission_request`
 * and `billing_admission`; prisma/functions/), its request read from the item's JSON by field
 * name. The items are taken in account order, then in the order they came (an API key's account
 * is looked up by its digest; a scoped token names its own), so two concurrent batches lock the
 * rows of their accounts in one order and cannot deadlock, and an account's items keep their
 * order. `OFFSET 0` keeps the sorted subquery apart: the lateral calls run over it row by row,
 * in its order. Each call's statements see the earlier calls' writes (a volatile function takes
 * a fresh snapshot per statement), so a batch's items of one account draw on one balance exactly
 * as they would one after another.
 */
const ADMIT_BATCH = {
  name: 'billing_admit_batch_v2',
  text: `SELECT b.ord, a.*
           FROM (SELECT e.ord, jsonb_populate_record(NULL::billing_admission_request, e.item) AS r
                   FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(item, ord)
                   LEFT JOIN api_keys k ON k.key_digest = e.item->>'key_digest'
                  ORDER BY COALESCE(k.account_id, e.item->>'account_id'), e.ord
                 OFFSET 0) b
          CROSS JOIN LATERAL billing_admit_v5(b.r) a`,
};

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
 * Admissions in one round trip and one transaction: each item's row, in the items' order
 * (undefined would be a defect). One failing item fails the statement: `admitRows` then runs its
 * items one by one.
 */
export async function admitBatchStatement(
  pool: pg.Pool,
  items: readonly AdmitStatementParams[],
): Promise<(AdmitColumns | undefined)[]> {
  const { rows } = await pool.query<AdmitColumns & { ord: string }>({
    ...ADMIT_BATCH,
    values: [JSON.stringify(items.map((item) => batchItem(item)))],
  });
  // WITH ORDINALITY counts from 1, as int8 (text on the wire).
  const byOrd = new Map(rows.map(({ ord, ...row }) => [Number(ord) - 1, row]));
  return items.map((_, index) => byOrd.get(index));
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
): Promise<(AdmitRow | Error)[]> {
  if (params.length === 0) return [];
  const rowsOf = (columns: readonly (AdmitColumns | undefined)[]) =>
    columns.map((row) => (row ? { ...row, nowMs } : new Error('billing_admit returned no row')));
  try {
    return rowsOf(await admitBatchStatement(pool, params));
  } catch (error) {
    if (params.length === 1) return [asError(error)];
  }
  const rows: (AdmitRow | Error)[] = [];
  for (const one of params) {
    try {
      rows.push(...rowsOf(await admitBatchStatement(pool, [one])));
    } catch (error) {
      rows.push(asError(error));
    }
  }
  return rows;
}

const asError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));
