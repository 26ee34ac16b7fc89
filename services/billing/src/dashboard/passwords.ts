import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Dashboard passwords, hashed with scrypt (node:crypto, RFC 7914): memory-hard, no native
 * dependency. Parameters N = 2^15, r = 8, p = 1 use 32 MiB and ~0.1 s per hash on one core
 * (OWASP's scrypt minimum is N = 2^17 with r = 8, p = 1 for ~128 MiB; 2^15 is the documented
 * trade-off for a 2-core gateway: sign-in is rate limited per address and per email). The
 * parameters are stored with each hash, so raising them later re-hashes nothing: old hashes keep
 * verifying with their own parameters.
 *
 * Stored form: `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>` (16-byte salt, 32-byte hash).
 */

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  // Node refuses parameters needing more than `maxmem` (32 MiB by default): allow 2× the need.
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')]
    .map(String)
    .join('$');
}

// Verified against when the user is unknown, so an unknown email costs the same time.
const DECOY_HASH = `scrypt$${DEFAULT_SCRYPT_PARAMS.N}$8$1$${Buffer.alloc(SALT_LENGTH).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`;

/** Constant-time check; `stored` null (no such user, no password yet) is always false. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? DECOY_HASH).split('$');
  const [scheme, n, r, p, salt, hash] = parts;
  if (parts.length !== 6 || scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected) && stored !== null;
}
