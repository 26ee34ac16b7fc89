import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { parseKeyringSpec, type KeyEntry } from './keyring-spec.js';

/** Ciphertext, nonce and tag of one AES-256-GCM seal, as stored (three `bytea` columns). */
export interface Sealed {
  ciphertext: Uint8Array;
  nonce: Uint8Array;
  tag: Uint8Array;
}

/** A sealed value with the version of the key that sealed it (stored beside it). */
export interface SealedValue extends Sealed {
  keyVersion: number;
}

/** Values stored before keys had versions were sealed with the one key there was: version 1. */
export const LEGACY_KEY_VERSION = 1;

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The key a sealed value names is not configured (retired too early, or a wrong config). */
export class KeyVersionUnavailableError extends Error {
  constructor(readonly keyVersion: number) {
    super(`sealed with key version ${keyVersion}, which is not configured`);
    this.name = 'KeyVersionUnavailableError';
  }
}

/**
 * AES-256-GCM under versioned 32-byte keys: the newest key seals, every configured version
 * opens, so keys rotate without downtime (add the new key first, retire the old one once nothing
 * sealed with it remains). Every seal takes a fresh random 96-bit nonce. The AAD binds a value to
 * its row, so ciphertext copied to another row fails to open instead of being served there.
 */
export class Keyring {
  readonly #keys: ReadonlyMap<number, Buffer>;
  readonly currentVersion: number;

  private constructor(entries: readonly KeyEntry[]) {
    this.#keys = new Map(entries.map((entry) => [entry.version, entry.key]));
    this.currentVersion = entries[0]!.version;
  }

  /** From the configured value (see keyring-spec.ts); throws without echoing key material. */
  static parse(spec: string): Keyring {
    return new Keyring(parseKeyringSpec(spec));
  }

  /** Configured versions, newest first. */
  get versions(): number[] {
    return [...this.#keys.keys()];
  }

  seal(plaintext: Uint8Array | string, aad: string): SealedValue {
    const nonce = randomBytes(NONCE_BYTES);
    const key = this.#keys.get(this.currentVersion)!;
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const data = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
    const ciphertext = Buffer.concat([cipher.update(data), cipher.final()]);
    return { ciphertext, nonce, tag: cipher.getAuthTag(), keyVersion: this.currentVersion };
  }

  /**
   * Throws `KeyVersionUnavailableError` when the value's key version is not configured, and an
   * error when the value was altered or sealed with another key or AAD. A missing version means
   * a value from before versions: version 1.
   */
  open(sealed: Sealed & { keyVersion?: number | null }, aad: string): Buffer {
    const version = sealed.keyVersion ?? LEGACY_KEY_VERSION;
    const key = this.#keys.get(version);
    if (!key) throw new KeyVersionUnavailableError(version);
    if (sealed.nonce.length !== NONCE_BYTES || sealed.tag.length !== TAG_BYTES) {
      throw new Error('sealed value has a malformed nonce or tag');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce, {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  }
}
