/**
 * Admission's repository in billing: the signing key a scoped token names (plain `pg`, a named
 * prepared statement on the pool Prisma runs on). The admission statement and its rows are
 * @gateway/ledger-calls' (edge admits API keys with them too, ADR 0070); the rest of identity's
 * statements (Prisma): identity-repository.ts.
 */
import type pg from 'pg';

/** An API key row's id, digest and sealed secret (a scoped token's signing key). */
export interface SigningKeyRow {
  id: string;
  key_digest: string;
  secret_ciphertext: Buffer;
  secret_nonce: Buffer;
  secret_auth_tag: Buffer;
  secret_key_version: number;
}

const FIND_SIGNING_KEY = {
  name: 'identity_signing_key_v1',
  text: `SELECT id, key_digest, secret_ciphertext, secret_nonce, secret_auth_tag, secret_key_version
           FROM api_keys WHERE account_id = $1 AND name = $2`,
};

export async function findSigningKeyRow(
  pool: pg.Pool,
  accountId: string,
  keyName: string,
): Promise<SigningKeyRow | null> {
  const { rows } = await pool.query<SigningKeyRow>({
    ...FIND_SIGNING_KEY,
    values: [accountId, keyName],
  });
  return rows[0] ?? null;
}
