/**
 * The configuration format of a keyring (`MASTER_KEY`, `ENCRYPTION_KEY`):
 *
 * - `<base64>`: one key, version 1 — the format used before keys had versions;
 * - `v3:<base64>,v2:<base64>,...`: versioned keys, newest first. The first key seals; every
 *   listed key opens what was sealed under its version.
 *
 * Each key is standard base64 (with its padding) of exactly 32 bytes. Error messages never
 * contain key material.
 */

export interface KeyEntry {
  version: number;
  key: Buffer;
}

const KEY_BYTES = 32;
/** Enough for a few overlapping rotations; a longer list is a sign of keys never retired. */
const MAX_KEYS = 16;
const MAX_VERSION = 999_999;
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;
const VERSIONED = /^v([1-9][0-9]{0,5}):(.*)$/s;

export function parseKeyringSpec(spec: string): KeyEntry[] {
  if (BASE64_KEY.test(spec)) return [{ version: 1, key: decodeKey(spec, 1) }];
  const parts = spec.split(',');
  if (parts.length > MAX_KEYS) throw new Error(`at most ${MAX_KEYS} key versions`);
  const entries = parts.map((part, index) => {
    const match = VERSIONED.exec(part);
    if (!match) {
      throw new Error(
        `entry ${index + 1} must be v<version>:<base64 of ${KEY_BYTES} bytes> (or the whole value one base64 key)`,
      );
    }
    const version = Number(match[1]);
    if (version > MAX_VERSION) throw new Error(`entry ${index + 1}: version above ${MAX_VERSION}`);
    return { version, key: decodeKey(match[2]!, version) };
  });
  entries.forEach((entry, index) => {
    const previous = entries[index - 1];
    if (previous && previous.version <= entry.version) {
      throw new Error('key versions must be distinct and listed newest (highest) first');
    }
  });
  return entries;
}

/** Whether `spec` parses (for configuration schemas). */
export function isKeyringSpec(spec: string): boolean {
  try {
    parseKeyringSpec(spec);
    return true;
  } catch {
    return false;
  }
}

function decodeKey(text: string, version: number): Buffer {
  const key = BASE64_KEY.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  // Re-encoding catches non-canonical base64 (stray low bits), which would hide a typo.
  if (key.length !== KEY_BYTES || key.toString('base64') !== text) {
    throw new Error(`key v${version} must be standard base64 of exactly ${KEY_BYTES} bytes`);
  }
  return key;
}
