/**
 * Admission's repository: the request path's statements on plain `pg` (named prepared statements
 * on the pool Prisma runs on, one connection bound; no ORM). The admission function and its row
 * read as the answer (caller, hold, model); the signing key a scoped token names; API keys' last
 * use, written off the request's path by `ApiKeyLastUsed`. The rest of identity's statements
 * (Prisma): identity-repository.ts.
 */
import type { InputModality, MediaKind, RateLimitDecision } from '@gateway/contracts';
import type pg from 'pg';
import type { Admission, ModelRecord, Clock, ModelNode, Principal } from '../identity/types.js';

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

function required<T>(value: T | null, column: string): T {
  if (value === null) throw new Error(`billing_admit: ${column} missing on an admission`);
  return value;
}

function modelOf(row: AdmitRow): ModelRecord {
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

/**
 * Who is calling, from the row: an API key, or a scoped token (`token`: its digest and `exp`,
 * for a client-minted token the registry has no row for yet).
 */
export function principalOf(
  row: AdmitRow,
  token: { digest: string; expiresAt: Date } | null,
): Principal {
  const base = {
    accountId: row.account_id ?? '',
    apiKeyName: row.api_key_name ?? '',
    rateLimitPerMinute: row.rate_limit_per_minute ?? 0,
    webhookFormat: row.webhook_format === 'B' ? ('B' as const) : ('A' as const),
  };
  if (token === null) return { ...base, kind: 'api_key' };
  return {
    ...base,
    kind: 'scoped_token',
    token: {
      id: row.token_id,
      digest: token.digest,
      models: row.token_models,
      spendingLimitMicroDzd: row.token_limit === null ? null : BigInt(row.token_limit),
      expiresAt: row.token_expires_at ?? token.expiresAt,
    },
  };
}

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
 * (undefined would be a defect). One failing item fails the statement: the caller retries its
 * items one by one (admission.ts).
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

/** An API key row's id, digest and sealed secret (a scoped token's signing key). */
export interface SigningKeyRow {
  id: string;
  key_digest: string;
  secret_ciphertext: Buffer;
  secret_nonce: Buffer;
  secret_auth_tag: Buffer;
  secret_key_version: number;
}

const FIND_SIGNING_KEY = {
  name: 'identity_signing_key_v1',
  text: `SELECT id, key_digest, secret_ciphertext, secret_nonce, secret_auth_tag, secret_key_version
           FROM api_keys WHERE account_id = $1 AND name = $2`,
};

export async function findSigningKeyRow(
  pool: pg.Pool,
  accountId: string,
  keyName: string,
): Promise<SigningKeyRow | null> {
  const { rows } = await pool.query<SigningKeyRow>({
    ...FIND_SIGNING_KEY,
    values: [accountId, keyName],
  });
  return rows[0] ?? null;
}

const TOUCH_LAST_USED = {
  name: 'billing_api_key_last_used_v1',
  text:
    'UPDATE api_keys SET last_used_at = $3 WHERE account_id = $1 AND name = $2 ' +
    'AND (last_used_at IS NULL OR last_used_at <= $3::timestamptz - make_interval(secs => $4))',
};

/** Sets the key's `last_used_at` to `at`, unless written less than `intervalS` before it. */
async function touchApiKeyLastUsed(
  pool: pg.Pool,
  accountId: string,
  keyName: string,
  at: Date,
  intervalS: number,
): Promise<void> {
  await pool.query({ ...TOUCH_LAST_USED, values: [accountId, keyName, at, intervalS] });
}

export interface LastUsedOptions {
  pool: pg.Pool;
  clock: Clock;
  /** At most one write per key in this interval; 60 s by default. */
  intervalMs?: number;
  /** Keys remembered at once; beyond it the memory is cleared (a few extra writes). */
  maxTracked?: number;
  onError?: (error: unknown) => void;
}

/**
 * "Last used" of API keys (the dashboard's key list), written cheaply: off the request's path
 * (not awaited), at most once per key and interval per billing replica (remembered in memory),
 * and the statement itself skips a row written less than an interval ago (other replicas).
 * A request made through a scoped token counts as a use of the key that signed it.
 */
export class ApiKeyLastUsed {
  readonly #options: LastUsedOptions;
  readonly #intervalMs: number;
  readonly #writtenAtMs = new Map<string, number>();

  constructor(options: LastUsedOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? 60_000;
  }

  touch(accountId: string, keyName: string): void {
    const now = this.#options.clock();
    const id = `${accountId}\u0000${keyName}`;
    const last = this.#writtenAtMs.get(id);
    if (last !== undefined && now.getTime() - last < this.#intervalMs) return;
    if (this.#writtenAtMs.size >= (this.#options.maxTracked ?? 10_000)) this.#writtenAtMs.clear();
    this.#writtenAtMs.set(id, now.getTime());
    touchApiKeyLastUsed(this.#options.pool, accountId, keyName, now, this.#intervalMs / 1000).catch(
      (error: unknown) => this.#options.onError?.(error),
    );
  }
}
