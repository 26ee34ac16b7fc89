/**
 * What each outcome of the admission statement answers (billing's and edge's admissions alike): the refusals decided before the request
 * was counted (401, 403) and those after it (they carry the rate-limit decision), with the
 * messages the spec's error table gives them.
 */
import { GatewayError, formatDzd } from '@gateway/contracts';
import type { MediaUse, RateLimitDecision } from '@gateway/contracts';
import { constantTimeEqual } from '@gateway/crypto';
import type { AdmitRow } from './admit-statement.js';
import type { AdmitRequest, ModelRecord } from './admission-types.js';
import {
  budgetExhausted,
  holdIdTaken,
  INSUFFICIENT_BALANCE_MESSAGE,
  modelNotFound,
} from './refusals.js';

export const invalidKey = (message: string) => new GatewayError('invalid_api_key', message);

/** Why a scoped token is refused when its signature does not verify. */
export const BAD_SIGNATURE_REASON = 'Scoped token signature is not valid';

/** 401 / 403: decided before the request was counted. */
export function refusalBeforeCount(
  row: AdmitRow,
  apiKeyDigest: string | null,
): GatewayError | null {
  switch (row.outcome) {
    case 'invalid_api_key':
      return invalidKey('Invalid API key');
    case 'key_changed':
    case 'token_mismatch':
      return invalidKey(BAD_SIGNATURE_REASON);
    case 'token_revoked':
      if (row.window_count !== null) return null;
      return new GatewayError('token_revoked', 'Scoped token was revoked by its owner');
    case 'account_suspended':
      return new GatewayError('account_suspended', 'Account is suspended');
  }
  // The index found the row; its digest is compared again in constant time.
  if (apiKeyDigest !== null && !constantTimeEqual(row.key_digest ?? '', apiKeyDigest)) {
    return invalidKey('Invalid API key');
  }
  return null;
}

/** Refusals after the rate-limit step (they carry `details.rateLimit`). */
export function refusalAfterCount(row: AdmitRow, request: AdmitRequest): GatewayError | null {
  switch (row.outcome) {
    case 'rate_limit_exceeded':
      return null;
    case 'model_not_found':
      return modelNotFound(request.model);
    case 'model_not_on_endpoint':
      return modelNotOnEndpoint(row.model_id ?? request.model);
    case 'unsupported_parameter':
      return unsupportedParameter(request.nodeUnsupportedParameter ?? '');
    case 'unsupported_content':
      return unsupportedContentOf(row, request);
    case 'model_not_allowed':
      return modelNotAllowed(row.model_id ?? request.model, 'this scoped token', row.token_models);
    case 'model_not_allowed_for_key':
      return modelNotAllowed(
        row.model_id ?? request.model,
        `API key '${row.api_key_name ?? ''}'`,
        row.key_models,
      );
    case 'token_revoked':
      // Revoked between the registry read and the token's lock (or registered revoked meanwhile).
      return new GatewayError('token_revoked', 'Scoped token was revoked by its owner');
    case 'token_mismatch':
      return invalidKey(BAD_SIGNATURE_REASON);
    case 'budget_exhausted':
      if (row.budget_scope !== null) return budgetRefusal(row);
      return budgetExhausted(
        { spentMicroDzd: big(row.token_spent), reservedMicroDzd: big(row.token_reserved) },
        big(row.token_limit),
        big(row.worst_case_micro_dzd),
      );
    case 'insufficient_balance':
      return new GatewayError('insufficient_balance', INSUFFICIENT_BALANCE_MESSAGE);
    case 'hold_id_taken':
      return holdIdTaken(row.hold_id ?? '', row.hold_status ?? 'pending');
    case 'admitted':
    case 'replayed':
      return null;
    default:
      throw new Error(`billing_admit: unknown outcome ${row.outcome}`);
  }
}

const big = (value: string | null): bigint => BigInt(value ?? 0);

/**
 * 402 naming the budget that refused (the key's or the token's), what is spent and held in its
 * window, and when the window starts over.
 */
function budgetRefusal(row: AdmitRow): GatewayError {
  const whose =
    row.budget_scope === 'api_key'
      ? `API key '${row.api_key_name ?? ''}'`
      : `scoped token ${row.token_id ?? ''}`;
  const limit = big(row.budget_limit);
  const spent = big(row.budget_spent);
  const reserved = big(row.budget_reserved);
  const period = row.budget_period === 'total' ? 'in total' : `this ${row.budget_period ?? ''}`;
  const resets = row.budget_resets_at
    ? ` It resets at ${row.budget_resets_at.toISOString()}.`
    : ' It does not reset.';
  const held = reserved > 0n ? ` (${formatDzd(reserved)} more held by requests in progress)` : '';
  return new GatewayError(
    'budget_exhausted',
    `Budget of ${whose} exhausted: ${formatDzd(spent)} of ${formatDzd(limit)} spent ${period}` +
      `${held}, and this request may cost up to ${formatDzd(big(row.worst_case_micro_dzd))}.` +
      resets,
  );
}

function unsupportedContentOf(row: AdmitRow, request: AdmitRequest): GatewayError {
  const use = request.media?.kinds.find((entry) => entry.kind === row.refused_media_kind);
  if (!use) throw new Error(`billing_admit: refused content ${row.refused_media_kind} not sent`);
  const model = {
    id: row.model_id ?? request.model,
    inputModalities: row.model_input_modalities ?? [],
  };
  return unsupportedContent(model, use);
}

// --- refusals and checks of the request

const modelNotOnEndpoint = (id: string): GatewayError =>
  new GatewayError('model_not_found', `Model '${id}' is not available on this endpoint`, {
    param: 'model',
  });

/** 403 naming whose model list refused (a key's covers the tokens it signs). */
const modelNotAllowed = (id: string, whose: string, allowed: readonly string[] | null) =>
  new GatewayError(
    'model_not_allowed',
    `Model '${id}' is not allowed for ${whose}. Allowed models: ${(allowed ?? []).join(', ')}`,
    { param: 'model' },
  );

/** The reference API's wording for an unknown argument. */
const unsupportedParameter = (name: string): GatewayError =>
  new GatewayError('invalid_request_body', `Unrecognized request argument supplied: ${name}`, {
    param: name,
  });

/** 400 naming the first part of a kind the model does not read, before any hold. */
function unsupportedContent(
  model: Pick<ModelRecord, 'id' | 'inputModalities'>,
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
