/**
 * The gateway's random identifiers: `<prefix>_` and lowercase base32, so that an id is safe in a
 * URL, a header and a log line, and says what it names. Shared by billing (accounts, keys, holds,
 * ledger transactions) and the worker, which names the ledger transaction of a settlement it
 * applies itself (ADR 0070).
 */
import { randomBytes } from 'node:crypto';

const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `length` random lowercase base32 characters (uniform: 256 is a multiple of 32). */
export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += BASE32_ALPHABET[byte & 31];
  return out;
}

/** `<prefix>_` + 20 random base32 characters (100 bits), e.g. `txn_k3x...`, `hold_...`. */
export const newId = (prefix: string): string => `${prefix}_${randomBase32(20)}`;
