import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { SealedSecret } from './types.js';

/**
 * Secret material of the identity part: API keys, their digests, the AES-256-GCM box their
 * secrets are stored in, identifiers, and constant-time comparison.
 */

export const API_KEY_PREFIX = 'sk_live_';
/** 32 random bytes in base64url without padding. */
const API_KEY_BODY_LENGTH = 43;
const API_KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{43}$/;

const MASTER_KEY_BYTES = 32;
const GCM_NONCE_BYTES = 12;
const GCM_TAG_BYTES = 16;

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

/**
 * AES-256-GCM under one 32-byte master key. Each seal uses a fresh random 96-bit nonce (safe for
 * far more than the number of keys this service will ever seal). `open` fails on any change to the
 * ciphertext, nonce, tag or AAD.
 */
export class SecretBox {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /** From the configured master key: standard base64 (padding optional) of exactly 32 bytes. */
  static fromBase64(masterKeyBase64: string): SecretBox {
    const text = masterKeyBase64.trim();
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
      throw new Error('identity master key must be base64');
    }
    const key = Buffer.from(text, 'base64');
    if (key.length !== MASTER_KEY_BYTES || key.toString('base64') !== padBase64(text)) {
      throw new Error(`identity master key must be base64 of exactly ${MASTER_KEY_BYTES} bytes`);
    }
    return new SecretBox(key);
  }

  seal(plaintext: string, aad: string): SealedSecret {
    const nonce = randomBytes(GCM_NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce, {
      authTagLength: GCM_TAG_BYTES,
    });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext, nonce, authTag: cipher.getAuthTag() };
  }

  /** Throws when the sealed value was not produced by this key with this AAD. */
  open(sealed: SealedSecret, aad: string): string {
    if (sealed.nonce.length !== GCM_NONCE_BYTES || sealed.authTag.length !== GCM_TAG_BYTES) {
      throw new Error('sealed secret has a malformed nonce or tag');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.nonce, {
      authTagLength: GCM_TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(sealed.authTag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  }
}

function padBase64(text: string): string {
  const bare = text.replace(/=+$/, '');
  return bare + '='.repeat((4 - (bare.length % 4)) % 4);
}

const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `length` random lowercase base32 characters (uniform: 256 is a multiple of 32). */
export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += BASE32_ALPHABET[byte & 31];
  return out;
}

/** Public user id: `usr_` + 20 random lowercase base32 characters (100 bits). */
export const newAccountId = (): string => `usr_${randomBase32(20)}`;
/** API key row id (internal). */
export const newApiKeyId = (): string => `key_${randomBase32(20)}`;
/** Scoped-token registry id. */
export const newScopedTokenId = (): string => `tok_${randomBase32(20)}`;
/** `jti` of issued tokens: makes every issued token distinct, even with identical claims. */
export const newTokenNonce = (): string => randomBytes(16).toString('base64url');
