import type { Keyring } from '@gateway/crypto';
import { pgPoolOf, type PrismaClient } from '../db/client.js';
import { AccountService } from './accounts.js';
import { Authenticator } from './authenticate.js';
import { Catalog } from '../catalog/catalog.js';
import { DEFAULT_TOKEN_PREFIX, validTokenPrefix } from './jwt.js';
import { ApiKeyLastUsed, DEFAULT_HOLD_TTL_MS } from '@gateway/ledger-calls';
import { PgAdmission } from '../admission/admission.js';
import { IdentityRepository } from './identity-repository.js';
import { RateLimiter } from '../rate-limits/rate-limit.js';
import { RateLimitRepository } from '../rate-limits/rate-limit-repository.js';
import { KeyRateLimits } from '../rate-limits/key-rate-limits.js';
import { ScopedTokenService, TokenVerifier } from './scoped-tokens.js';
import { SigningKeyCache } from './signing-keys.js';
import { systemClock, type Clock } from './types.js';

export interface IdentityOptions {
  prisma: PrismaClient;
  /** The MASTER_KEY keyring sealing API-key secrets (and billing's other stored secrets). */
  keyring: Keyring;
  /** `kid`/`sub` prefix of scoped tokens; `service` by default. */
  tokenPrefix?: string;
  clock?: Clock;
  /** Tolerance on `nbf` and on the 1-year bound of `exp`; 60 s by default. */
  clockSkewS?: number;
  /** Lifetime of the holds admission places (HOLD_TTL_MS); 15 minutes by default. */
  holdTtlMs?: number;
  /** Decrypted scoped-token signing keys kept in memory; 10 000 by default. */
  signingKeyCacheSize?: number;
  /** A failed last-used write (never fails a request). */
  onLastUsedError?: (error: unknown) => void;
}

/** The identity part of billing, wired over one Prisma client. */
export interface Identity {
  /** The client everything here runs on (the dashboard's users and sessions share it). */
  prisma: PrismaClient;
  /** Its repository: every query of accounts, keys, tokens and catalog. */
  store: IdentityRepository;
  keyring: Keyring;
  accounts: AccountService;
  scopedTokens: ScopedTokenService;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  /** A key's and a scoped token's own rate limits. */
  keyRateLimits: KeyRateLimits;
  catalog: Catalog;
  /** The request path's admission: credential to hold in one PostgreSQL round trip. */
  admission: PgAdmission;
  /** Records API keys' last use (at most once a minute per key), off the request's path. */
  lastUsed: ApiKeyLastUsed;
}

export function createIdentity(options: IdentityOptions): Identity {
  const tokenPrefix = options.tokenPrefix ?? DEFAULT_TOKEN_PREFIX;
  if (!validTokenPrefix(tokenPrefix)) {
    throw new Error('scoped token prefix must be 1 to 64 characters from A-Z a-z 0-9 . _ -');
  }
  const clock = options.clock ?? systemClock;
  const store = new IdentityRepository(options.prisma);
  const keyring = options.keyring;
  const verifier = new TokenVerifier({
    store,
    keyring,
    tokenPrefix,
    ...(options.clockSkewS === undefined ? {} : { clockSkewS: options.clockSkewS }),
  });
  const rateLimits = new RateLimitRepository(options.prisma);
  const rateLimiter = new RateLimiter({ windows: rateLimits, clock });
  const pool = pgPoolOf(options.prisma);
  const keys = new SigningKeyCache({
    pool,
    keyring,
    ...(options.signingKeyCacheSize === undefined
      ? {}
      : { maxEntries: options.signingKeyCacheSize }),
  });
  return {
    prisma: options.prisma,
    store,
    keyring,
    accounts: new AccountService({ store, keyring, clock }),
    scopedTokens: new ScopedTokenService({ store, keyring, clock, verifier }),
    authenticator: new Authenticator({
      store,
      verifier,
      clock,
      ...(options.clockSkewS === undefined ? {} : { clockSkewS: options.clockSkewS }),
    }),
    rateLimiter,
    keyRateLimits: new KeyRateLimits(rateLimits),
    catalog: new Catalog({ store }),
    admission: new PgAdmission({
      pool,
      keys,
      clock,
      tokenPrefix,
      holdTtlMs: options.holdTtlMs ?? DEFAULT_HOLD_TTL_MS,
      ...(options.clockSkewS === undefined ? {} : { clockSkewS: options.clockSkewS }),
    }),
    lastUsed: new ApiKeyLastUsed({
      pool,
      clock,
      ...(options.onLastUsedError ? { onError: options.onLastUsedError } : {}),
    }),
  };
}

export { AccountService, accountToJson } from './accounts.js';
export type { AccountPage, AccountPatch } from './accounts.js';
export { Authenticator, isoSeconds } from './authenticate.js';
export { Catalog, modelToJson } from '../catalog/catalog.js';
export { DEFAULT_TOKEN_PREFIX } from './jwt.js';
export { PgAdmission } from '../admission/admission.js';
export type {
  AdmissionItem,
  AdmissionResult,
  Admitted,
  CredentialAdmitRequest,
} from '../admission/admission.js';
export { IdentityRepository } from './identity-repository.js';
export type { PrismaTx } from './identity-repository.js';
export { RateLimiter, rateLimitError, rateSubjectOf } from '../rate-limits/rate-limit.js';
export { ScopedTokenService, TokenVerifier } from './scoped-tokens.js';
export * from './types.js';
