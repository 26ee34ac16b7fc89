import type { Keyring } from '@gateway/crypto';
import {
  dzdToMicroDzd,
  GatewayError,
  LIMITS,
  microDzdToDzd,
  scopedTokenExpiryS,
  validateScopedTokenCreate,
} from '@gateway/contracts';
import type { ScopedTokenCreated, ScopedTokenInspection } from '@gateway/contracts';
import {
  ANY_MODEL,
  buildKid,
  buildSubject,
  decodeUntrustedHeader,
  parseKid,
  readClaims,
  signScopedToken,
  stripTokenPrefix,
  verifyScopedToken,
  type ScopedTokenPayload,
  type TokenClaims,
} from './jwt.js';
import { BAD_SIGNATURE_REASON } from '@gateway/ledger-calls';
import { apiKeySecretAad, newScopedTokenId, newTokenNonce, sha256Hex } from './secrets.js';
import type { IdentityRepository } from './identity-repository.js';
import type { Account, Clock, ScopedTokenRecord } from './types.js';

/** Clock skew tolerated on `nbf` and on the 1-year bound of `exp`, in seconds. */
export const DEFAULT_CLOCK_SKEW_S = 60;

/** A token whose signature verified under the key its `kid` names. */
export interface VerifiedToken {
  /** SHA-256 of the full `jwt:...` string: the registry key. */
  digest: string;
  account: Account;
  apiKeyName: string;
  claims: TokenClaims;
}

export type TokenVerification = { ok: true; token: VerifiedToken } | { ok: false; reason: string };

/**
 * Checks a presented `jwt:` credential, trusting nothing in it before the signature verifies:
 * shape → header (decoded untrusted) with `alg` exactly HS256 → `kid` parsed into account and
 * key name → that key loaded and its secret decrypted → HS256 signature (jsonwebtoken, algorithms
 * pinned to HS256) → claims. Expiry is not judged here: `authenticate` reports it distinctly and
 * inspection shows expired tokens.
 */
export class TokenVerifier {
  readonly #store: IdentityRepository;
  readonly #box: Keyring;
  readonly #prefix: string;
  readonly #clockSkewS: number;

  constructor(deps: {
    store: IdentityRepository;
    keyring: Keyring;
    tokenPrefix: string;
    clockSkewS?: number;
  }) {
    this.#store = deps.store;
    this.#box = deps.keyring;
    this.#prefix = deps.tokenPrefix;
    this.#clockSkewS = deps.clockSkewS ?? DEFAULT_CLOCK_SKEW_S;
  }

  get tokenPrefix(): string {
    return this.#prefix;
  }

  async verify(credential: string, nowS: number): Promise<TokenVerification> {
    const parsed = parseScopedToken(credential, this.#prefix);
    if (!parsed.ok) return parsed;
    const { kid } = parsed;
    const found = await this.#store.findApiKeyByName(kid.accountId, kid.keyName);
    // Unknown key and bad signature read the same: key names are not probed this way.
    if (!found) return BAD_SIGNATURE;
    const rawKey = this.#box
      .open(found.key.secret, apiKeySecretAad(kid.accountId, kid.keyName))
      .toString('utf8');
    const read = verifyParsedToken(parsed, rawKey, nowS, this.#prefix, this.#clockSkewS);
    if (!read.ok) return read;
    return {
      ok: true,
      token: {
        digest: sha256Hex(credential),
        account: found.account,
        apiKeyName: kid.keyName,
        claims: read.claims,
      },
    };
  }
}

export const BAD_SIGNATURE = { ok: false, reason: BAD_SIGNATURE_REASON } as const;

/** A `jwt:` credential whose shape and header passed, before any key is looked up. */
export interface ParsedScopedToken {
  ok: true;
  compact: string;
  kid: { accountId: string; keyName: string };
}

/**
 * The checks that need no key: shape → header (decoded untrusted) with `alg` exactly HS256 →
 * `typ` → no `crit` → `kid` parsed into account and key name.
 */
export function parseScopedToken(
  credential: string,
  prefix: string,
): ParsedScopedToken | { ok: false; reason: string } {
  const compact = stripTokenPrefix(credential);
  if (compact === null) return { ok: false, reason: 'Malformed scoped token' };
  const header = decodeUntrustedHeader(compact);
  if (header === null) return { ok: false, reason: 'Malformed scoped token header' };
  if (header.alg !== 'HS256') {
    return { ok: false, reason: 'Unsupported scoped token algorithm: only HS256 is accepted' };
  }
  if (
    header.typ !== undefined &&
    (typeof header.typ !== 'string' || header.typ.toUpperCase() !== 'JWT')
  ) {
    return { ok: false, reason: 'Scoped token typ must be JWT' };
  }
  if (header.crit !== undefined) {
    return { ok: false, reason: 'Scoped token header must not have critical extensions' };
  }
  const kid = parseKid(header.kid, prefix);
  if (kid === null) {
    return {
      ok: false,
      reason: `Scoped token kid must be ${prefix}:<user_id>:<base64(api_key_name)>`,
    };
  }
  return { ok: true, compact, kid };
}

/** The HS256 signature under the signing key's raw key, then the claims. */
export function verifyParsedToken(
  parsed: ParsedScopedToken,
  rawKey: string,
  nowS: number,
  prefix: string,
  clockSkewS: number,
): { ok: true; claims: TokenClaims } | { ok: false; reason: string } {
  const payload = verifyScopedToken(parsed.compact, rawKey, nowS, clockSkewS);
  if (payload === null) return BAD_SIGNATURE;
  return readClaims(payload, buildSubject(prefix, parsed.kid.accountId));
}

const tokenNotFound = () =>
  new GatewayError('resource_not_found', 'Scoped token not found', { param: 'jwt' });

/**
 * Scoped tokens: creation (`POST /v1/scoped-jwt`), inspection (`GET /v1/scoped-jwt`) and
 * revocation (`DELETE /v1/scoped-jwt`, operator API). Tokens are registered by digest: at
 * creation for issued tokens, on first use (or revocation) for client-minted ones.
 */
export class ScopedTokenService {
  readonly #store: IdentityRepository;
  readonly #box: Keyring;
  readonly #clock: Clock;
  readonly #verifier: TokenVerifier;

  constructor(deps: {
    store: IdentityRepository;
    keyring: Keyring;
    clock: Clock;
    verifier: TokenVerifier;
  }) {
    this.#store = deps.store;
    this.#box = deps.keyring;
    this.#clock = deps.clock;
    this.#verifier = deps.verifier;
  }

  /**
   * Issues a token signed by the caller's account key named `api_key_name` (404
   * `resource_not_found`, param `api_key_name`, when the account has no such key). `body` is the
   * raw JSON request body; it is validated here (400 `invalid_request_body`).
   */
  async create(accountId: string, body: unknown): Promise<ScopedTokenCreated> {
    const now = this.#clock();
    const nowS = Math.floor(now.getTime() / 1000);
    const request = validateScopedTokenCreate(body, { nowS });
    const found = await this.#store.findApiKeyByName(accountId, request.api_key_name);
    if (!found) {
      throw new GatewayError(
        'resource_not_found',
        `API key '${request.api_key_name}' not found on this account`,
        { param: 'api_key_name' },
      );
    }
    const keyName = found.key.name;
    const rawKey = this.#box
      .open(found.key.secret, apiKeySecretAad(accountId, keyName))
      .toString('utf8');
    const exp = scopedTokenExpiryS(request, nowS);
    const models =
      request.models === undefined || request.models.includes(ANY_MODEL)
        ? null
        : [...new Set(request.models)];
    const limitMicroDzd =
      request.spending_limit === undefined ? null : dzdToMicroDzd(request.spending_limit);

    const prefix = this.#verifier.tokenPrefix;
    const payload: ScopedTokenPayload = {
      sub: buildSubject(prefix, accountId),
      model: models?.[0] ?? ANY_MODEL,
      ...(models ? { models } : {}),
      exp,
      ...(request.spending_limit === undefined ? {} : { spending_limit: request.spending_limit }),
      jti: newTokenNonce(),
    };
    const token = signScopedToken({
      rawApiKey: rawKey,
      kid: buildKid(prefix, accountId, keyName),
      payload,
    });
    if (token.length > LIMITS.scopedTokenMaxLength) {
      throw new GatewayError(
        'invalid_request_body',
        `models makes the token ${token.length} characters long, more than the ` +
          `${LIMITS.scopedTokenMaxLength} an Authorization header carries: list fewer or shorter models`,
        { param: 'models' },
      );
    }
    await this.#store.insertScopedToken({
      id: newScopedTokenId(),
      digest: sha256Hex(token),
      accountId,
      apiKeyName: keyName,
      models,
      expiresAt: new Date(exp * 1000),
      spendingLimitMicroDzd: limitMicroDzd,
      spentMicroDzd: 0n,
      reservedMicroDzd: 0n,
      revokedAt: null,
      origin: 'issued',
      createdAt: now,
    });
    return { token };
  }

  /**
   * Inspects a token of the caller's account. Registered tokens are read from the registry (so
   * spend and revocation show, and a token whose key was since regenerated can still be looked
   * at); an unregistered client-minted token is verified and shown with zero spend. 400 for a
   * string that is not a token at all; 404 for a token of another account or one that does not
   * verify.
   */
  async inspect(accountId: string, token: string): Promise<ScopedTokenInspection> {
    const nowS = this.#nowS();
    const registered = await this.#store.findScopedTokenByDigest(this.#digestOf(token));
    if (registered) {
      if (registered.accountId !== accountId) throw tokenNotFound();
      return inspection(registered, nowS);
    }
    const verified = await this.#verifyOwn(token, nowS, accountId);
    return inspection(this.#clientRecord(verified, null), nowS);
  }

  /**
   * Revokes a token by digest; idempotent (a second revocation keeps the first time). With
   * `accountId` (public API, the signer's API key) only that account's tokens; without it
   * (operator API) any token. A client-minted token never used yet is verified and registered
   * as revoked.
   */
  async revoke(
    token: string,
    options: { accountId?: string } = {},
  ): Promise<ScopedTokenInspection> {
    const now = this.#clock();
    const nowS = Math.floor(now.getTime() / 1000);
    const digest = this.#digestOf(token);
    const registered = await this.#store.findScopedTokenByDigest(digest);
    if (registered) {
      if (options.accountId !== undefined && registered.accountId !== options.accountId) {
        throw tokenNotFound();
      }
      const revoked = await this.#store.revokeScopedToken(digest, now);
      return inspection(revoked ?? registered, nowS);
    }
    const verified = await this.#verifyOwn(token, nowS, options.accountId);
    const stored = await this.#store.registerScopedToken(this.#clientRecord(verified, now));
    const revoked = stored.revokedAt ? stored : await this.#store.revokeScopedToken(digest, now);
    return inspection(revoked ?? stored, nowS);
  }

  /**
   * Deletes registry rows of tokens expired for longer than `graceMs`, at most `limit`, except
   * those a hold names (their spend stays readable for finance). Safe: an expired token is refused
   * (`token_expired`) before the registry is read, whatever the registry holds.
   */
  async purgeExpired(graceMs: number, limit = 1_000): Promise<number> {
    return this.#store.purgeExpiredScopedTokens(new Date(this.#clock().getTime() - graceMs), limit);
  }

  /** The registry row of a client-minted token (first use or revocation). */
  #clientRecord(verified: VerifiedToken, revokedAt: Date | null): ScopedTokenRecord {
    return clientTokenRecord(verified, this.#clock(), revokedAt);
  }

  #digestOf(token: string): string {
    if (stripTokenPrefix(token) === null) {
      throw new GatewayError('invalid_request_body', 'jwt must be a scoped token (jwt:...)', {
        param: 'jwt',
      });
    }
    return sha256Hex(token);
  }

  async #verifyOwn(token: string, nowS: number, accountId: string | undefined) {
    const result = await this.#verifier.verify(token, nowS);
    if (!result.ok) throw tokenNotFound();
    if (accountId !== undefined && result.token.account.id !== accountId) throw tokenNotFound();
    return result.token;
  }

  #nowS(): number {
    return Math.floor(this.#clock().getTime() / 1000);
  }
}

/** Registry row for a verified client-minted token. */
export function clientTokenRecord(
  verified: VerifiedToken,
  now: Date,
  revokedAt: Date | null = null,
): ScopedTokenRecord {
  return {
    id: newScopedTokenId(),
    digest: verified.digest,
    accountId: verified.account.id,
    apiKeyName: verified.apiKeyName,
    models: verified.claims.models,
    expiresAt: new Date(verified.claims.exp * 1000),
    spendingLimitMicroDzd: verified.claims.spendingLimitMicroDzd,
    spentMicroDzd: 0n,
    reservedMicroDzd: 0n,
    revokedAt,
    origin: 'client',
    createdAt: now,
  };
}

export function inspection(token: ScopedTokenRecord, nowS: number): ScopedTokenInspection {
  const expiresAtS = Math.floor(token.expiresAt.getTime() / 1000);
  const limit = token.spendingLimitMicroDzd;
  const remaining =
    limit === null ? null : maxBigInt(0n, limit - token.spentMicroDzd - token.reservedMicroDzd);
  return {
    expires_at: expiresAtS,
    models: token.models,
    spending_limit: limit === null ? null : microDzdToDzd(limit),
    spent_dzd: microDzdToDzd(token.spentMicroDzd),
    remaining_dzd: remaining === null ? null : microDzdToDzd(remaining),
    revoked: token.revokedAt !== null,
    expired: nowS >= expiresAtS,
    api_key_name: token.apiKeyName,
  };
}

const maxBigInt = (a: bigint, b: bigint): bigint => (a > b ? a : b);
