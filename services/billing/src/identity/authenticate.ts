import { GatewayError, LIMITS } from '@gateway/contracts';
import { SCOPED_TOKEN_PREFIX } from './jwt.js';
import { clientTokenRecord, DEFAULT_CLOCK_SKEW_S, type TokenVerifier } from './scoped-tokens.js';
import { bearerCredential, constantTimeEqual, looksLikeApiKey, sha256Hex } from './secrets.js';
import type { IdentityRepository } from './identity-repository.js';
import type { Account, Clock, Principal } from './types.js';

const invalidKey = (message: string) => new GatewayError('invalid_api_key', message);

/** ISO 8601 to the second: `2027-03-01T12:00:00Z`. */
export function isoSeconds(unixS: number): string {
  return new Date(unixS * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Authenticates an `Authorization` header value (spec, Authentication; decisions §3). Throws a
 * GatewayError, checked in this order:
 *
 * 1. header missing/blank, scheme not Bearer, no credential → 401 `invalid_api_key`;
 * 2. API key (`sk_live_...`): unknown, deleted or regenerated → 401 `invalid_api_key`;
 * 3. scoped token (`jwt:...`): malformed, `alg` not exactly HS256 (`none` included), bad `kid`,
 *    unknown signing key or bad signature (regenerated/deleted key), bad `sub`, missing or
 *    non-integer `exp`, `exp` more than 1 year (+ clock skew) ahead, malformed `models` /
 *    `spending_limit` claim → 401 `invalid_api_key`;
 *    past `exp` → 401 `token_expired` (message gives the time, ISO 8601);
 *    revoked (registry) → 401 `token_revoked`; a client-minted token not in the registry yet is
 *    not registered here: admission does it with the first hold, so a refused request (401,
 *    403, 429, 402...) writes nothing durable for it;
 * 4. account suspended → 403 `account_suspended` (both kinds).
 *
 * Messages never echo the credential.
 */
export class Authenticator {
  readonly #store: IdentityRepository;
  readonly #verifier: TokenVerifier;
  readonly #clock: Clock;
  readonly #clockSkewS: number;

  constructor(deps: {
    store: IdentityRepository;
    verifier: TokenVerifier;
    clock: Clock;
    clockSkewS?: number;
  }) {
    this.#store = deps.store;
    this.#verifier = deps.verifier;
    this.#clock = deps.clock;
    this.#clockSkewS = deps.clockSkewS ?? DEFAULT_CLOCK_SKEW_S;
  }

  async authenticate(authorization: string | null | undefined): Promise<Principal> {
    const credential = bearerCredential(authorization);
    return credential.startsWith(SCOPED_TOKEN_PREFIX)
      ? this.#scopedToken(credential)
      : this.#apiKey(credential);
  }

  async #apiKey(credential: string): Promise<Principal> {
    if (!looksLikeApiKey(credential)) throw invalidKey('Invalid API key');
    const digest = sha256Hex(credential);
    const found = await this.#store.findApiKeyByDigest(digest);
    // The index lookup finds the row; the digest is compared again in constant time.
    if (!found || !constantTimeEqual(found.key.keyDigest, digest)) {
      throw invalidKey('Invalid API key');
    }
    ensureActive(found.account);
    return principal(found.account, 'api_key', found.key.name);
  }

  async #scopedToken(credential: string): Promise<Principal> {
    const now = this.#clock();
    const nowS = Math.floor(now.getTime() / 1000);
    const verification = await this.#verifier.verify(credential, nowS);
    if (!verification.ok) throw invalidKey(verification.reason);
    const verified = verification.token;
    checkTokenLifetime(verified.claims.exp, nowS, this.#clockSkewS);
    const found = await this.#store.findScopedTokenByDigest(verified.digest);
    const record = found ?? clientTokenRecord(verified, now);
    if (record.accountId !== verified.account.id || record.apiKeyName !== verified.apiKeyName) {
      throw invalidKey('Scoped token signature is not valid');
    }
    if (record.revokedAt !== null) {
      throw new GatewayError('token_revoked', 'Scoped token was revoked by its owner');
    }
    ensureActive(verified.account);
    return {
      ...principal(verified.account, 'scoped_token', verified.apiKeyName),
      token: {
        id: found ? found.id : null,
        digest: verified.digest,
        models: record.models,
        spendingLimitMicroDzd: record.spendingLimitMicroDzd,
        expiresAt: record.expiresAt,
      },
    };
  }
}

/** `exp` at most 1 year (+ skew) ahead (401 `invalid_api_key`), and not reached (401 `token_expired`). */
export function checkTokenLifetime(exp: number, nowS: number, clockSkewS: number): void {
  if (exp > nowS + LIMITS.scopedTokenMaxLifetimeS + clockSkewS) {
    throw invalidKey('Scoped token exp is more than 1 year ahead');
  }
  if (nowS >= exp) {
    throw new GatewayError('token_expired', `Scoped token expired at ${isoSeconds(exp)}`);
  }
}

function ensureActive(account: Account): void {
  if (account.status === 'suspended') {
    throw new GatewayError('account_suspended', 'Account is suspended');
  }
}

function principal(account: Account, kind: Principal['kind'], apiKeyName: string): Principal {
  return {
    accountId: account.id,
    kind,
    apiKeyName,
    rateLimitPerMinute: account.rateLimitPerMinute,
    webhookFormat: account.webhookFormat,
  };
}
