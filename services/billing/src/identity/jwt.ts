import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { dzdToMicroDzd, LIMITS } from '@gateway/contracts';

/**
 * The scoped-token format (spec, Resources → Scoped token): `jwt:` + an HS256 JWT whose header is
 * `{alg: 'HS256', typ: 'JWT', kid: '<prefix>:<user_id>:<base64(api_key_name)>'}` and whose payload
 * carries `sub: '<prefix>:<user_id>'`, `model`, `exp`, and our optional `models` and
 * `spending_limit` claims. The HMAC key is the signing API key's raw key string (UTF-8 bytes), so
 * a client holding the key can mint tokens with any standard JWT library.
 */

export const SCOPED_TOKEN_PREFIX = 'jwt:';
export const DEFAULT_TOKEN_PREFIX = 'service';

/** Longest token accepted at all (a 256-model token is ~70 KB; anything longer is junk). */
const MAX_TOKEN_LENGTH = 128 * 1024;
const MAX_HEADER_SEGMENT_LENGTH = 2048;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]+$/;
/** API key names (accounts.ts enforces the same rule when keys are created). */
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** The `models` claim value meaning "any model" (also the `model` claim of such tokens). */
export const ANY_MODEL = '*';

export function validTokenPrefix(prefix: string): boolean {
  return /^[A-Za-z0-9._-]{1,64}$/.test(prefix);
}

export function buildKid(prefix: string, accountId: string, keyName: string): string {
  return `${prefix}:${accountId}:${Buffer.from(keyName, 'utf8').toString('base64')}`;
}

export const buildSubject = (prefix: string, accountId: string): string => `${prefix}:${accountId}`;

/**
 * Parses `<prefix>:<user_id>:<base64(api_key_name)>`. The name may be standard base64 or
 * base64url, padded or not, but must be canonical (no stray bits) and a valid key name.
 */
export function parseKid(
  kid: unknown,
  prefix: string,
): { accountId: string; keyName: string } | null {
  if (typeof kid !== 'string' || kid.length > 512) return null;
  const parts = kid.split(':');
  if (parts.length !== 3) return null;
  const [kidPrefix, accountId, encodedName] = parts as [string, string, string];
  if (kidPrefix !== prefix || !ACCOUNT_ID_PATTERN.test(accountId)) return null;
  const normalized = encodedName
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .replace(/={0,2}$/, '');
  if (!/^[A-Za-z0-9+/]+$/.test(normalized)) return null;
  const decoded = Buffer.from(normalized, 'base64');
  if (decoded.toString('base64').replace(/=+$/, '') !== normalized) return null;
  const keyName = decoded.toString('utf8');
  if (!API_KEY_NAME_PATTERN.test(keyName)) return null;
  return { accountId, keyName };
}

/** Splits `jwt:<h>.<p>.<s>` and checks its shape; null when it is not one. */
export function stripTokenPrefix(credential: string): string | null {
  if (!credential.startsWith(SCOPED_TOKEN_PREFIX) || credential.length > MAX_TOKEN_LENGTH) {
    return null;
  }
  const compact = credential.slice(SCOPED_TOKEN_PREFIX.length);
  return JWT_SHAPE.test(compact) ? compact : null;
}

/**
 * The JOSE header of a compact JWT, decoded WITHOUT verifying anything: only used to pick the
 * algorithm check and the signing key. null when it is not a base64url JSON object.
 */
export function decodeUntrustedHeader(compact: string): Record<string, unknown> | null {
  const segment = compact.slice(0, compact.indexOf('.'));
  if (!BASE64URL_SEGMENT.test(segment) || segment.length > MAX_HEADER_SEGMENT_LENGTH) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isPlainObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

export interface ScopedTokenPayload {
  sub: string;
  model: string;
  models?: string[];
  exp: number;
  /** DZD, as in the creation request. */
  spending_limit?: number;
  /** Random: makes each issued token unique. */
  jti?: string;
}

/** Signs an HS256 scoped token with the API key's raw key as the HMAC key. */
export function signScopedToken(input: {
  rawApiKey: string;
  kid: string;
  payload: ScopedTokenPayload;
}): string {
  const compact = jwt.sign(input.payload, hmacKey(input.rawApiKey), {
    algorithm: 'HS256',
    header: { alg: 'HS256', typ: 'JWT', kid: input.kid },
    noTimestamp: true,
  });
  return SCOPED_TOKEN_PREFIX + compact;
}

/**
 * Verifies the HS256 signature (only HS256 is accepted, whatever the header says) and returns
 * the payload object, or null. Expiry is NOT checked here (the caller reports it distinctly);
 * `nbf`, when present, is, with `clockToleranceS`.
 */
export function verifyScopedToken(
  compact: string,
  rawApiKey: string,
  nowS: number,
  clockToleranceS: number,
): Record<string, unknown> | null {
  try {
    const payload: unknown = jwt.verify(compact, hmacKey(rawApiKey), {
      algorithms: ['HS256'],
      ignoreExpiration: true,
      clockTimestamp: nowS,
      clockTolerance: clockToleranceS,
    });
    return isPlainObject(payload) ? payload : null;
  } catch {
    return null;
  }
}

function hmacKey(rawApiKey: string) {
  return createSecretKey(Buffer.from(rawApiKey, 'utf8'));
}

export interface TokenClaims {
  /** Unix seconds. */
  exp: number;
  /** null = any model. */
  models: string[] | null;
  /** null = no limit. */
  spendingLimitMicroDzd: bigint | null;
}

/**
 * Reads the claims of a verified payload. `sub` must be `<prefix>:<user_id>` of the kid's
 * account, `exp` an integer. Models: the `models` claim (array) when present, else the `model`
 * claim, `*` or neither meaning any model. `spending_limit`: DZD, at most 6 decimals. A claim of
 * the wrong type is an error, never ignored (ignoring a bad limit would lift it).
 */
export function readClaims(
  payload: Record<string, unknown>,
  expectedSubject: string,
): { ok: true; claims: TokenClaims } | { ok: false; reason: string } {
  if (payload.sub !== expectedSubject) {
    return { ok: false, reason: 'Scoped token subject does not match its key id' };
  }
  const { exp } = payload;
  if (exp === undefined) return { ok: false, reason: 'Scoped token has no exp claim' };
  if (typeof exp !== 'number' || !Number.isSafeInteger(exp) || exp <= 0) {
    return { ok: false, reason: 'Scoped token exp must be an integer unix timestamp' };
  }

  let models: string[] | null;
  if (payload.models !== undefined) {
    const list = payload.models;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      list.length > LIMITS.tokenModelsMaxItems ||
      !list.every(isModelId)
    ) {
      return { ok: false, reason: 'Scoped token models claim must be a list of model ids' };
    }
    models = list.includes(ANY_MODEL) ? null : [...new Set(list as string[])];
  } else if (payload.model !== undefined) {
    if (!isModelId(payload.model)) {
      return { ok: false, reason: 'Scoped token model claim must be a model id' };
    }
    models = payload.model === ANY_MODEL ? null : [payload.model];
  } else {
    models = null;
  }

  let spendingLimitMicroDzd: bigint | null = null;
  const limit = payload.spending_limit;
  if (limit !== undefined && limit !== null) {
    try {
      if (typeof limit !== 'number' || limit > LIMITS.spendingLimitMaxDzd) throw new RangeError();
      spendingLimitMicroDzd = dzdToMicroDzd(limit);
    } catch {
      return {
        ok: false,
        reason: 'Scoped token spending_limit must be a non-negative DZD amount',
      };
    }
  }
  return { ok: true, claims: { exp, models, spendingLimitMicroDzd } };
}

function isModelId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= LIMITS.modelIdMaxLength;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
