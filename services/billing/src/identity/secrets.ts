import { randomBytes } from 'node:crypto';
import { constantTimeEqual, newId, randomBase32, sha256Hex } from '@gateway/crypto';
import {
  API_KEY_BODY_LENGTH,
  API_KEY_PREFIX,
  bearerCredential,
  looksLikeApiKey,
} from '@gateway/ledger-calls';

/**
 * Billing's credentials and random identifiers: the bearer credential of an `Authorization`
 * header, API keys (shape, new keys, digests), constant-time comparison, and every random id
 * billing makes (accounts, keys, scoped tokens, holds, journal transactions; the id scheme is
 * @gateway/crypto's `newId`). Secrets are sealed
 * with the shared keyring (@gateway/crypto, `MASTER_KEY`).
 */

/** A new raw API key: `sk_live_` + base64url of 32 random bytes (43 characters). */
export function generateApiKey(): string {
  const body = randomBytes(32).toString('base64url');
  if (body.length !== API_KEY_BODY_LENGTH) throw new Error('unexpected API key length');
  return API_KEY_PREFIX + body;
}

/** AAD binding a sealed API-key secret to its row: moving ciphertext to another key fails. */
export function apiKeySecretAad(accountId: string, keyName: string): string {
  return `${accountId}:${keyName}`;
}

export {
  API_KEY_PREFIX,
  bearerCredential,
  constantTimeEqual,
  looksLikeApiKey,
  newId,
  randomBase32,
  sha256Hex,
};

/** Public user id: `usr_` + 20 random lowercase base32 characters (100 bits). */
export const newAccountId = (): string => `usr_${randomBase32(20)}`;
/** API key row id (internal). */
export const newApiKeyId = (): string => `key_${randomBase32(20)}`;
/** Scoped-token registry id. */
export const newScopedTokenId = (): string => `tok_${randomBase32(20)}`;
/** `jti` of issued tokens: makes every issued token distinct, even with identical claims. */
export const newTokenNonce = (): string => randomBytes(16).toString('base64url');
