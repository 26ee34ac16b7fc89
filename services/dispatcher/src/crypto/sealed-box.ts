import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Ciphertext, nonce and tag as stored in three `bytea` columns. */
export interface Sealed {
  ciphertext: Buffer;
  nonce: Buffer;
  tag: Buffer;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM under the configured key. Every seal takes a fresh random 96-bit nonce. The AAD
 * binds a value to its row (account and row id), so ciphertext copied to another row fails to
 * open instead of being sent to the wrong customer.
 */
export class SealedBox {
  readonly #key: Buffer;

  constructor(keyBase64: string) {
    const key = Buffer.from(keyBase64, 'base64');
    if (key.length !== KEY_BYTES || key.toString('base64') !== keyBase64) {
      throw new Error(`encryption key must be base64 of exactly ${KEY_BYTES} bytes`);
    }
    this.#key = key;
  }

  seal(plaintext: Buffer, aad: string): Sealed {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { ciphertext, nonce, tag: cipher.getAuthTag() };
  }

  /** Throws when the value was not sealed by this key with this AAD, or was altered. */
  open(sealed: Sealed, aad: string): Buffer {
    const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.nonce, {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  }
}

/** AAD of a row owned by an account: `<accountId>:<rowId>`. */
export const rowAad = (accountId: string, rowId: string): string => `${accountId}:${rowId}`;
