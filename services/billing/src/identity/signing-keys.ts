import type { Keyring } from '@gateway/crypto';
import type pg from 'pg';
import { findSigningKeyRow } from '../admission/admission-repository.js';
import { apiKeySecretAad } from './secrets.js';

/** A scoped token's signing key, decrypted: the row it came from and its HS256 secret. */
export interface SigningKey {
  /** `api_keys.id` and `key_digest` when it was read: admission refuses if either changed. */
  id: string;
  keyDigest: string;
  rawKey: string;
}

export const DEFAULT_SIGNING_KEY_CACHE_SIZE = 10_000;

/**
 * Decrypted signing keys of scoped tokens, in memory, bounded (least recently used evicted), keyed
 * by account + key name; each entry remembers the key row (id + digest) it was read from. The
 * cache is never trusted alone: admission passes that row to PostgreSQL, which refuses when the
 * key was deleted or regenerated since (the entry is then dropped and the key read again), so a
 * change applies to the very next request. Secrets never leave this object (no logs, no errors).
 */
export class SigningKeyCache {
  readonly #pool: pg.Pool;
  readonly #keyring: Keyring;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, SigningKey>();

  constructor(deps: { pool: pg.Pool; keyring: Keyring; maxEntries?: number }) {
    this.#pool = deps.pool;
    this.#keyring = deps.keyring;
    this.#maxEntries = deps.maxEntries ?? DEFAULT_SIGNING_KEY_CACHE_SIZE;
  }

  /** The cached key, if any (marked recently used). */
  cached(accountId: string, keyName: string): SigningKey | undefined {
    const slot = cacheSlot(accountId, keyName);
    const entry = this.#entries.get(slot);
    if (entry) {
      this.#entries.delete(slot);
      this.#entries.set(slot, entry);
    }
    return entry;
  }

  /** Reads the key from the database (one prepared SELECT) and caches it; null when none. */
  async load(accountId: string, keyName: string): Promise<SigningKey | null> {
    const slot = cacheSlot(accountId, keyName);
    this.#entries.delete(slot);
    const row = await findSigningKeyRow(this.#pool, accountId, keyName);
    if (!row) return null;
    const sealed = {
      ciphertext: row.secret_ciphertext,
      nonce: row.secret_nonce,
      tag: row.secret_auth_tag,
      keyVersion: row.secret_key_version,
    };
    const rawKey = this.#keyring.open(sealed, apiKeySecretAad(accountId, keyName)).toString('utf8');
    const key = { id: row.id, keyDigest: row.key_digest, rawKey };
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(slot, key);
    return key;
  }

  forget(accountId: string, keyName: string): void {
    this.#entries.delete(cacheSlot(accountId, keyName));
  }

  get size(): number {
    return this.#entries.size;
  }
}

// Account ids never contain ':'; key names may not either.
const cacheSlot = (accountId: string, keyName: string) => `${accountId}:${keyName}`;
