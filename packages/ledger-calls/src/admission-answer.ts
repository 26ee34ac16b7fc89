/**
 * An admission's answer, read from its row the same way wherever a request is admitted (billing;
 * edge for API keys, ADR 0070): the refusal the row means (admission-refusals.ts), the rate-limit
 * decision from its window counts (rate-windows.ts), who was admitted and the hold, and the
 * contract's wire form of it.
 */
import {
  GatewayError,
  LIMITS,
  microDzdToWire,
  type AdmissionRequest,
  type AdmissionResponse,
  type Caller,
  type RateLimitDecision,
} from '@gateway/contracts';
import type { AdmitRow } from './admit-statement.js';
import { refusalAfterCount, refusalBeforeCount, withRateLimit } from './admission-refusals.js';
import type {
  Admission,
  AdmitRequest,
  CredentialAdmitRequest,
  ModelNode,
  ModelRecord,
  Principal,
} from './admission-types.js';
import {
  decideTokens,
  decideWindows,
  rateLimitError,
  requestWindows,
  tokenRateLimitMessage,
  tokenWindows,
} from './rate-windows.js';

/** Who was admitted, and the hold. */
export interface Admitted {
  principal: Principal;
  admission: Admission;
}

/** The credential the row was asked for: an API key's digest, or a scoped token. */
export type RowCredential =
  { kind: 'api_key'; digest: string } | { kind: 'scoped_token'; digest: string; expiresAt: Date };

/**
 * The row's meaning: the admission, or the refusal it throws, in the spec's order (401, 403
 * before the request was counted; then the refusals that carry `details.rateLimit`, the tokens
 * per minute, the requests per minute).
 */
export function admissionOutcome(
  row: AdmitRow,
  credential: RowCredential,
  request: AdmitRequest,
): Admitted {
  const before = refusalBeforeCount(row, credential.kind === 'api_key' ? credential.digest : null);
  if (before) throw before;
  const principal = principalOf(row, credential.kind === 'scoped_token' ? credential : null);
  const { rateLimit, tokenRefusal } = rateLimitOf(row);
  const refusal = refusalAfterCount(row, request);
  if (refusal) throw withRateLimit(refusal, rateLimit);
  if (tokenRefusal) throw withRateLimit(rateLimitError(rateLimit, tokenRefusal), rateLimit);
  if (!rateLimit.allowed) throw withRateLimit(rateLimitError(rateLimit), rateLimit);
  return { principal, admission: toAdmission(row, rateLimit) };
}

/**
 * The tightest requests-per-minute window and, when the key or token limits tokens per
 * minute (known only once the request reached that step), the tightest tokens window; a
 * tokens refusal is the row's `rate_limit_exceeded` with every request window within limits.
 */
function rateLimitOf(row: AdmitRow): { rateLimit: RateLimitDecision; tokenRefusal?: string } {
  const counts = {
    account: row.window_count ?? 0,
    key: { limit: row.key_requests_per_minute, count: row.key_window_count ?? 0 },
    token: { limit: row.token_requests_per_minute, count: row.token_window_count ?? 0 },
  };
  const requests = decideWindows(requestWindows(row.rate_limit_per_minute ?? 0, counts), row.nowMs);
  const limited = (limit: string | null, used: string | null) => ({
    limit: limit === null || used === null ? null : BigInt(limit),
    used: BigInt(used ?? 0),
  });
  const windows = tokenWindows({
    key: limited(row.key_tokens_per_minute, row.key_tokens_used),
    token: limited(row.token_tokens_per_minute, row.token_tokens_used),
  });
  const requestTokens = BigInt(row.rate_tokens ?? 0);
  const admitted = row.outcome === 'admitted';
  const tokens = decideTokens(windows, {
    tokens: requestTokens,
    counted: admitted,
    nowMs: row.nowMs,
  });
  if (!tokens) return { rateLimit: requests };
  const refused = !admitted && requests.allowed && tokens.refusal !== undefined;
  if (!refused || !tokens.refusal) return { rateLimit: { ...requests, tokens: tokens.tokens } };
  const retryAfterS = Math.max(1, Math.ceil((tokens.tokens.resetMs - row.nowMs) / 1000));
  return {
    rateLimit: { ...requests, allowed: false, retryAfterS, tokens: tokens.tokens },
    tokenRefusal: tokenRateLimitMessage(tokens.refusal, requestTokens),
  };
}

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
export function toAdmission(row: AdmitRow, rateLimit: RateLimitDecision): Admission {
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

/** The contract's admission request as the domain's (the credential travels beside it). */
export function admitRequestOf(body: AdmissionRequest): CredentialAdmitRequest {
  return {
    model: body.model,
    estimate: body.estimate,
    priority: body.priority,
    holdId: body.holdId,
    ...(body.providers ? { providers: body.providers } : {}),
    ...(body.kinds ? { kinds: body.kinds } : {}),
    ...(body.nodeUnsupportedParameter === undefined
      ? {}
      : { nodeUnsupportedParameter: body.nodeUnsupportedParameter }),
    ...(body.media === undefined ? {} : { media: body.media }),
    ...(body.endpoint === undefined ? {} : { endpoint: body.endpoint }),
    ...(body.requestId === undefined ? {} : { requestId: body.requestId }),
  };
}

/** The caller as the contract names it. */
export function callerOf(principal: Principal): Caller {
  return {
    accountId: principal.accountId,
    kind: principal.kind,
    apiKeyName: principal.apiKeyName,
    webhookFormat: principal.webhookFormat,
    tokenModels: principal.token?.models ?? null,
  };
}

/** The contract's admission answer. */
export function admissionToWire(principal: Principal, admission: Admission): AdmissionResponse {
  return {
    caller: callerOf(principal),
    hold: {
      id: admission.hold.id,
      amountMicroDzd: microDzdToWire(admission.hold.amountMicroDzd),
      expiresAt: admission.hold.expiresAt.toISOString(),
    },
    model: {
      id: admission.model.id,
      kind: admission.model.kind,
      provider: admission.model.provider,
      updatedAt: admission.model.updatedAt.toISOString(),
    },
    rateLimit: admission.rateLimit,
    replayed: admission.hold.replayed,
    ...(admission.hold.replayed
      ? {}
      : {
          prices: {
            inputMicroDzdPerM: microDzdToWire(admission.model.inputPriceMicroDzdPerM),
            outputMicroDzdPerM: microDzdToWire(admission.model.outputPriceMicroDzdPerM),
          },
        }),
  };
}

/** The request's estimate, checked (400 naming the field): the function trusts its integers. */
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
