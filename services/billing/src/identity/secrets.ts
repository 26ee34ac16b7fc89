import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '@gateway/contracts';
import { newId, randomBase32 } from '@gateway/crypto';

/**
 * Billing's credentials and random identifiers: the bearer credential of an `Authorization`
 * header, API keys (shape, new keys, digests), constant-time comparison, and every random id
 * billing makes (accounts, keys, scoped tokens, holds, journal transactions; the id scheme is
 * @gateway/crypto's `newId`). Secrets are sealed
 * with the shared keyring (@gateway/crypto, `MASTER_KEY`).
 */

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The credential of an `Authorization: Bearer <credential>` header (401 otherwise). */
export function bearerCredential(authorization: string | null | undefined): string {
  if (authorization === undefined || authorization === null || authorization.trim() === '') {
    throw new GatewayError(
      'invalid_api_key',
      'Missing Authorization header: send Authorization: Bearer <API key>',
    );
  }
  const match = BEARER.exec(authorization.trim());
  if (!match) throw new GatewayError('invalid_api_key', 'Authorization scheme must be Bearer');
  return match[1] as string;
}

export const API_KEY_PREFIX = 'sk_live_';
/** 32 random bytes in base64url without padding. */
const API_KEY_BODY_LENGTH = 43;
const API_KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{43}$/;

/** A new raw API key: `sk_live_` + base64url of 32 random bytes (43 characters). */
export function generateApiKey(): string {
  const body = randomBytes(32).toString('base64url');
  if (body.length !== API_KEY_BODY_LENGTH) throw new Error('unexpected API key length');
  return API_KEY_PREFIX + body;
}

/** Whether a presented credential has the shape of an API key (checked before any lookup). */
export function looksLikeApiKey(credential: string): boolean {
  return API_KEY_PATTERN.test(credential);
}

/** SHA-256, lowercase hex: the lookup digest of API keys and scoped tokens. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * Constant-time string equality. Both sides are hashed first, so the comparison time depends on
 * neither the contents nor the lengths of the inputs.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}

/** AAD binding a sealed API-key secret to its row: moving ciphertext to another key fails. */
export function apiKeySecretAad(accountId: string, keyName: string): string {
  return `${accountId}:${keyName}`;
}

export { newId, randomBase32 };

/** Public user id: `usr_` + 20 random lowercase base32 characters (100 bits). */
export const newAccountId = (): string => `usr_${randomBase32(20)}`;
/** API key row id (internal). */
export const newApiKeyId = (): string => `key_${randomBase32(20)}`;
/** Scoped-token registry id. */
export const newScopedTokenId = (): string => `tok_${randomBase32(20)}`;
/** `jti` of issued tokens: makes every issued token distinct, even with identical claims. */
export const newTokenNonce = (): string => randomBytes(16).toString('base64url');
