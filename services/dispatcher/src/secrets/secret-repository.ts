import type pg from 'pg';
import { inPoolTransaction } from '@gateway/runtime';
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

/** The newest `limit` secrets of `account` not yet expired, oldest first (SQL expressions). */
const activeSecretsSql = (account: string, limit: string) =>
  `SELECT ${COLUMNS}
     FROM (SELECT ${COLUMNS}
             FROM webhook_secrets
            WHERE account_id = ${account} AND (expires_at IS NULL OR expires_at > clock_timestamp())
            ORDER BY created_at DESC, id DESC
            LIMIT ${limit}) AS newest
    ORDER BY created_at, id`;

/**
 * The same secrets as one JSON value (bytes in base64), for a statement that returns other rows
 * and its account's secrets with each: a delivery's claim reads them in its own round trip.
 */
export const activeSecretsJsonSql = (account: string, limit: string) =>
  `(SELECT COALESCE(json_agg(json_build_object(
             'id', a.id, 'ciphertext', encode(a.secret_ciphertext, 'base64'),
             'nonce', encode(a.secret_nonce, 'base64'), 'tag', encode(a.secret_tag, 'base64'),
             'keyVersion', a.secret_key_version, 'createdAt', a.created_at,
             'expiresAt', a.expires_at) ORDER BY a.created_at, a.id), '[]'::json)
      FROM (${activeSecretsSql(account, limit)}) AS a)`;

/** A secret as `activeSecretsJsonSql` returns it. */
export interface SecretJson {
  id: string;
  ciphertext: string;
  nonce: string;
  tag: string;
  keyVersion: number;
  createdAt: string;
  expiresAt: string | null;
}

export const secretRowFromJson = (row: SecretJson): SecretRow => ({
  id: row.id,
  sealed: {
    ciphertext: Buffer.from(row.ciphertext, 'base64'),
    nonce: Buffer.from(row.nonce, 'base64'),
    tag: Buffer.from(row.tag, 'base64'),
    keyVersion: row.keyVersion,
  },
  createdAt: new Date(row.createdAt),
  expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt),
});

/** PostgreSQL access for signing secrets; no decisions here (signing-secrets.ts makes them). */
export class SecretRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * The newest `limit` secrets not yet expired, oldest first. Rotations keep at most two
   * active; the limit holds even for rows a replica of an older release left behind during a
   * rolling update, so a delivery never carries more signatures than that.
   */
  async active(accountId: string, limit: number, db: Queryable = this.pool): Promise<SecretRow[]> {
    const result = await db.query<DbRow>(activeSecretsSql('$1', '$2'), [accountId, limit]);
    return result.rows.map(toRow);
  }

  /**
   * Runs `work` holding a per-account transaction lock, so two replicas never both create a
   * first secret, and two rotations never interleave.
   */
  withAccountLock<T>(accountId: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inPoolTransaction(this.pool, async (client) => {
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

  /**
   * Deletes every secret of the account but the newest (the current one): what a rotation does
   * to the previous one still in its window, and what "expire the previous secret now" does.
   * Returns how many of them were still signing (an expired row the tick had not purged yet
   * goes too, uncounted).
   */
  async deleteAllButNewest(client: pg.PoolClient, accountId: string): Promise<number> {
    const result = await client.query<{ signing: boolean }>(
      `DELETE FROM webhook_secrets
        WHERE account_id = $1
          AND id <> ALL (SELECT id FROM webhook_secrets
                          WHERE account_id = $1
                          ORDER BY created_at DESC, id DESC
                          LIMIT 1)
        RETURNING (expires_at IS NULL OR expires_at > clock_timestamp()) AS signing`,
      [accountId],
    );
    return result.rows.filter((row) => row.signing).length;
  }

  /**
   * Seconds until the account may rotate again when it already rotated `limit` times in the
   * last `windowMs`, else null: the `limit`-th newest rotation of the window must leave it.
   */
  async rotationRetryAfterS(
    client: pg.PoolClient,
    accountId: string,
    limit: number,
    windowMs: number,
  ): Promise<number | null> {
    const result = await client.query<{ retry_after_s: string }>(
      `SELECT ceil(extract(epoch FROM rotated_at + $3 * interval '1 millisecond'
                                    - clock_timestamp())) AS retry_after_s
         FROM webhook_secret_rotations
        WHERE account_id = $1 AND rotated_at > clock_timestamp() - $3 * interval '1 millisecond'
        ORDER BY rotated_at DESC
        OFFSET $2 LIMIT 1`,
      [accountId, limit - 1, windowMs],
    );
    const row = result.rows[0];
    return row === undefined ? null : Math.max(1, Number(row.retry_after_s));
  }

  async recordRotation(client: pg.PoolClient, accountId: string): Promise<void> {
    await client.query('INSERT INTO webhook_secret_rotations (account_id) VALUES ($1)', [
      accountId,
    ]);
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

  /** Rotations older than the limit's window no longer count. */
  async deleteRotationsBefore(windowMs: number): Promise<void> {
    await this.pool.query(
      `DELETE FROM webhook_secret_rotations
        WHERE rotated_at <= clock_timestamp() - $1 * interval '1 millisecond'`,
      [windowMs],
    );
  }
}
