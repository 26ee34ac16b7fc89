/**
 * Admission: the request path's credential-to-hold decision, with its refusals. ONE PostgreSQL
 * round trip (function `billing_admit_with_context_v4` over `billing_admit_v4`,
 * prisma/functions/; the statement and its row: admission-repository.ts): credential,
 * suspension, rate limit, model, token list, token registration and the hold.
 * Node does only what SQL cannot: the header, the API key's shape and SHA-256, and a scoped
 * token's HS256 signature (with the signing key cached decrypted, SigningKeyCache) and claims.
 *
 * Order of the refusals (the spec's error table, decisions §1): 401 credential (invalid,
 * expired, revoked) → 403 suspended → 429 rate limit → 404 model (not in the catalog, or not
 * of a provider and kind the endpoint serves) → 400 a parameter or content the model does not
 * take → 403 not in the token's list → 429 tokens per minute (the key's, the token's) → 402
 * budget → 402 balance. The 429 of requests per minute is the account's, the key's or the
 * token's, whichever refused. Every request from the rate limit on counts, refused ones
 * included, and every refusal after it carries `details.rateLimit` (the tightest limit). A
 * refusal registers no client-minted token and places no hold.
 */
import { GatewayError, LIMITS, formatDzd } from '@gateway/contracts';
import type { MediaUse, RateLimitDecision } from '@gateway/contracts';
import type pg from 'pg';
import { budgetExhausted, holdIdTaken, INSUFFICIENT_BALANCE_MESSAGE } from '../ledger/index.js';
import { requireId } from '../ledger/validation.js';
import {
  admitStatement,
  principalOf,
  toAdmissionRow,
  type AdmitRow,
} from './admission-repository.js';
import { checkTokenLifetime } from './authenticate.js';
import { modelNotFound } from './catalog.js';
import { SCOPED_TOKEN_PREFIX } from './jwt.js';
import {
  rateLimitError,
  requestWindows,
  tokenRateLimitMessage,
  tokenWindows,
  type RateLimiter,
} from './rate-limit.js';
import {
  BAD_SIGNATURE,
  DEFAULT_CLOCK_SKEW_S,
  parseScopedToken,
  verifyParsedToken,
  type ParsedScopedToken,
} from './scoped-tokens.js';
import {
  bearerCredential,
  constantTimeEqual,
  looksLikeApiKey,
  newId,
  newScopedTokenId,
  sha256Hex,
} from './secrets.js';
import type { SigningKey, SigningKeyCache } from './signing-keys.js';
import type { Admission, AdmitRequest, CatalogModel, Clock, Principal } from './types.js';

/**
 * The request without a principal: admission authenticates the credential itself. `endpoint`
 * and `requestId` are kept on the hold for the request's usage record.
 */
export type CredentialAdmitRequest = AdmitRequest & {
  endpoint?: string;
  requestId?: string;
};

/** A credential checked in Node, ready for the function. */
type Credential =
  | { kind: 'api_key'; digest: string }
  | {
      kind: 'scoped_token';
      parsed: ParsedScopedToken;
      key: SigningKey;
      digest: string;
      models: string[] | null;
      limitMicroDzd: bigint | null;
      expiresAt: Date;
    };

/** The rate limiter's window arithmetic (the count itself is taken in SQL). */
type WindowRule = Pick<RateLimiter, 'windowStartMs' | 'decideWindows' | 'decideTokens'>;

const invalidKey = (message: string) => new GatewayError('invalid_api_key', message);

export class PgAdmission {
  readonly #pool: pg.Pool;
  readonly #keys: SigningKeyCache;
  readonly #rateLimiter: WindowRule;
  readonly #clock: Clock;
  readonly #tokenPrefix: string;
  readonly #holdTtlMs: number;
  readonly #clockSkewS: number;

  constructor(deps: {
    pool: pg.Pool;
    keys: SigningKeyCache;
    rateLimiter: WindowRule;
    clock: Clock;
    tokenPrefix: string;
    holdTtlMs: number;
    clockSkewS?: number;
  }) {
    this.#pool = deps.pool;
    this.#keys = deps.keys;
    this.#rateLimiter = deps.rateLimiter;
    this.#clock = deps.clock;
    this.#tokenPrefix = deps.tokenPrefix;
    this.#holdTtlMs = deps.holdTtlMs;
    this.#clockSkewS = deps.clockSkewS ?? DEFAULT_CLOCK_SKEW_S;
  }

  async admit(
    authorization: string | null | undefined,
    request: CredentialAdmitRequest,
  ): Promise<{ principal: Principal; admission: Admission }> {
    const credential = await this.#credential(bearerCredential(authorization));
    const estimate = checkEstimate(request.estimate);
    const holdId =
      request.holdId === undefined ? newId('hold') : requireId('holdId', request.holdId);
    let row = await this.#call(credential, { ...request, estimate, holdId });
    if (row.outcome === 'key_changed' && credential.kind === 'scoped_token') {
      // Regenerated or deleted since it was cached: read it again and verify again, once.
      const fresh = await this.#scopedToken(credential.parsed, credential.digest, false);
      row = await this.#call(fresh, { ...request, estimate, holdId });
      if (row.outcome === 'key_changed') throw invalidKey(BAD_SIGNATURE.reason);
    }
    return this.#outcome(row, credential, request);
  }

  async #credential(credential: string): Promise<Credential> {
    if (!credential.startsWith(SCOPED_TOKEN_PREFIX)) {
      if (!looksLikeApiKey(credential)) throw invalidKey('Invalid API key');
      return { kind: 'api_key', digest: sha256Hex(credential) };
    }
    const parsed = parseScopedToken(credential, this.#tokenPrefix);
    if (!parsed.ok) throw invalidKey(parsed.reason);
    return this.#scopedToken(parsed, sha256Hex(credential), true);
  }

  /** Signature (cached key first; on failure the key is read again), claims, lifetime. */
  async #scopedToken(parsed: ParsedScopedToken, digest: string, useCache: boolean) {
    const { accountId, keyName } = parsed.kid;
    const nowS = Math.floor(this.#clock().getTime() / 1000);
    const verify = (key: SigningKey) =>
      verifyParsedToken(parsed, key.rawKey, nowS, this.#tokenPrefix, this.#clockSkewS);
    let key = useCache ? this.#keys.cached(accountId, keyName) : undefined;
    let read = key ? verify(key) : BAD_SIGNATURE;
    if (!read.ok && read.reason === BAD_SIGNATURE.reason) {
      key = (await this.#keys.load(accountId, keyName)) ?? undefined;
      read = key ? verify(key) : BAD_SIGNATURE;
    }
    if (!read.ok || !key) throw invalidKey(read.ok ? BAD_SIGNATURE.reason : read.reason);
    checkTokenLifetime(read.claims.exp, nowS, this.#clockSkewS);
    return {
      kind: 'scoped_token' as const,
      parsed,
      key,
      digest,
      models: read.claims.models,
      limitMicroDzd: read.claims.spendingLimitMicroDzd,
      expiresAt: new Date(read.claims.exp * 1000),
    };
  }

  async #call(
    credential: Credential,
    request: CredentialAdmitRequest & {
      holdId: string;
      estimate: ReturnType<typeof checkEstimate>;
    },
  ): Promise<AdmitRow> {
    const now = this.#clock();
    const token = credential.kind === 'scoped_token' ? credential : null;
    const row = await admitStatement(this.#pool, {
      keyDigest: credential.kind === 'api_key' ? credential.digest : null,
      accountId: token?.parsed.kid.accountId ?? null,
      signingKeyId: token?.key.id ?? null,
      signingKeyDigest: token?.key.keyDigest ?? null,
      tokenDigest: token?.digest ?? null,
      tokenModels: token?.models ?? null,
      tokenLimitMicroDzd: token?.limitMicroDzd ?? null,
      tokenExpiresAt: token?.expiresAt ?? null,
      newTokenId: token ? newScopedTokenId() : null,
      windowStartMs: this.#rateLimiter.windowStartMs(now.getTime()),
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
      holdExpiresAt: new Date(now.getTime() + this.#holdTtlMs),
      now,
      endpoint: request.endpoint ?? null,
      requestId: request.requestId ?? null,
    });
    if (!row) throw new Error('billing_admit returned no row');
    return Object.assign(row, { nowMs: now.getTime() });
  }

  #outcome(row: AdmitRow, credential: Credential, request: CredentialAdmitRequest) {
    const before = refusalBeforeCount(row, credential);
    if (before) throw before;
    const principal = principalOf(row, credential.kind === 'scoped_token' ? credential : null);
    const { rateLimit, tokenRefusal } = this.#rateLimitOf(row);
    const refusal = refusalAfterCount(row, request);
    if (refusal) throw withRateLimit(refusal, rateLimit);
    if (tokenRefusal) throw withRateLimit(rateLimitError(rateLimit, tokenRefusal), rateLimit);
    if (!rateLimit.allowed) throw withRateLimit(rateLimitError(rateLimit), rateLimit);
    return { principal, admission: toAdmissionRow(row, rateLimit) };
  }

  /**
   * The tightest requests-per-minute window and, when the key or token limits tokens per
   * minute (known only once the request reached that step), the tightest tokens window; a
   * tokens refusal is the row's `rate_limit_exceeded` with every request window within limits.
   */
  #rateLimitOf(row: AdmitRow): { rateLimit: RateLimitDecision; tokenRefusal?: string } {
    const counts = {
      account: row.window_count ?? 0,
      key: { limit: row.key_requests_per_minute, count: row.key_window_count ?? 0 },
      token: { limit: row.token_requests_per_minute, count: row.token_window_count ?? 0 },
    };
    const requests = this.#rateLimiter.decideWindows(
      requestWindows(row.rate_limit_per_minute ?? 0, counts),
      row.nowMs,
    );
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
    const tokens = this.#rateLimiter.decideTokens(windows, requestTokens, admitted, row.nowMs);
    if (!tokens) return { rateLimit: requests };
    const refused = !admitted && requests.allowed && tokens.refusal !== undefined;
    if (!refused || !tokens.refusal) return { rateLimit: { ...requests, tokens: tokens.tokens } };
    const retryAfterS = Math.max(1, Math.ceil((tokens.tokens.resetMs - row.nowMs) / 1000));
    return {
      rateLimit: { ...requests, allowed: false, retryAfterS, tokens: tokens.tokens },
      tokenRefusal: tokenRateLimitMessage(tokens.refusal, requestTokens),
    };
  }
}

/** 401 / 403: decided before the request was counted. */
function refusalBeforeCount(row: AdmitRow, credential: Credential): GatewayError | null {
  switch (row.outcome) {
    case 'invalid_api_key':
      return invalidKey('Invalid API key');
    case 'key_changed':
    case 'token_mismatch':
      return invalidKey(BAD_SIGNATURE.reason);
    case 'token_revoked':
      if (row.window_count !== null) return null;
      return new GatewayError('token_revoked', 'Scoped token was revoked by its owner');
    case 'account_suspended':
      return new GatewayError('account_suspended', 'Account is suspended');
  }
  // The index found the row; its digest is compared again in constant time.
  if (
    credential.kind === 'api_key' &&
    !constantTimeEqual(row.key_digest ?? '', credential.digest)
  ) {
    return invalidKey('Invalid API key');
  }
  return null;
}

/** Refusals after the rate-limit step (they carry `details.rateLimit`). */
function refusalAfterCount(row: AdmitRow, request: CredentialAdmitRequest): GatewayError | null {
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
      return modelNotAllowed(row.model_id ?? request.model, row.token_models ?? []);
    case 'token_revoked':
      // Revoked between the registry read and the token's lock (or registered revoked meanwhile).
      return new GatewayError('token_revoked', 'Scoped token was revoked by its owner');
    case 'token_mismatch':
      return invalidKey(BAD_SIGNATURE.reason);
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

function unsupportedContentOf(row: AdmitRow, request: CredentialAdmitRequest): GatewayError {
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

const modelNotAllowed = (id: string, allowed: readonly string[]): GatewayError =>
  new GatewayError(
    'model_not_allowed',
    `Model '${id}' is not allowed for this scoped token. Allowed models: ${allowed.join(', ')}`,
    { param: 'model' },
  );

/** The reference API's wording for an unknown argument. */
const unsupportedParameter = (name: string): GatewayError =>
  new GatewayError('invalid_request_body', `Unrecognized request argument supplied: ${name}`, {
    param: name,
  });

/** 400 naming the first part of a kind the model does not read, before any hold. */
function unsupportedContent(
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

function withRateLimit(error: GatewayError, rateLimit: RateLimitDecision): GatewayError {
  return new GatewayError(error.code, error.message, {
    ...(error.param === undefined ? {} : { param: error.param }),
    details: { ...error.details, rateLimit },
    cause: error,
  });
}

function checkEstimate(estimate: AdmitRequest['estimate']) {
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
