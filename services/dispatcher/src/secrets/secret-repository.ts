import type pg from 'pg';
import { inTransaction } from '../db/transaction.js';
import type { SealedValue } from '@gateway/crypto';

/** A stored secret, still sealed. */
export interface SecretRow {
  id: string;
  sealed: SealedValue;
  createdAt: Date;
  expiresAt: Date | null;
}

interface DbRow {
  id: string;
  secret_ciphertext: Buffer;
  secret_nonce: Buffer;
  secret_tag: Buffer;
  secret_key_version: number;
  created_at: Date;
  expires_at: Date | null;
}

const toRow = (row: DbRow): SecretRow => ({
  id: row.id,
  sealed: {
    ciphertext: row.secret_ciphertext,
    nonce: row.secret_nonce,
    tag: row.secret_tag,
    keyVersion: row.secret_key_version,
  },
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

const COLUMNS =
  'id, secret_ciphertext, secret_nonce, secret_tag, secret_key_version, created_at, expires_at';

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** PostgreSQL access for signing secrets; no decisions here (signing-secrets.ts makes them). */
export class SecretRepository {
  constructor(private readonly pool: pg.Pool) {}

  /** Secrets not yet expired, oldest first. */
  async active(accountId: string, db: Queryable = this.pool): Promise<SecretRow[]> {
    const result = await db.query<DbRow>(
      `SELECT ${COLUMNS}
         FROM webhook_secrets
        WHERE account_id = $1 AND (expires_at IS NULL OR expires_at > clock_timestamp())
        ORDER BY created_at, id`,
      [accountId],
    );
    return result.rows.map(toRow);
  }

  /**
   * Runs `work` holding a per-account transaction lock, so two replicas never both create a
   * first secret, and two rotations never interleave.
   */
  withAccountLock<T>(accountId: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('whsec:' || $1, 0))", [
        accountId,
      ]);
      return work(client);
    });
  }

  async insert(
    client: pg.PoolClient,
    accountId: string,
    id: string,
    sealed: SealedValue,
  ): Promise<SecretRow> {
    const result = await client.query<DbRow>(
      `INSERT INTO webhook_secrets
         (id, account_id, secret_ciphertext, secret_nonce, secret_tag, secret_key_version)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [id, accountId, sealed.ciphertext, sealed.nonce, sealed.tag, sealed.keyVersion],
    );
    return toRow(result.rows[0]!);
  }

  /** Gives every current secret of the account an end: now + the rotation window. */
  async expireCurrent(client: pg.PoolClient, accountId: string, windowMs: number): Promise<void> {
    await client.query(
      `UPDATE webhook_secrets
          SET expires_at = clock_timestamp() + $2 * interval '1 millisecond'
        WHERE account_id = $1 AND expires_at IS NULL`,
      [accountId, windowMs],
    );
  }

  /** Expired secrets sign nothing any more; their key material need not stay at rest. */
  async deleteExpired(): Promise<number> {
    const result = await this.pool.query(
      'DELETE FROM webhook_secrets WHERE expires_at <= clock_timestamp()',
    );
    return result.rowCount ?? 0;
  }
}
