import type pg from 'pg';
import { newSecretId, newSigningSecret } from '../crypto/ids.js';
import type { Keyring } from '@gateway/crypto';
import { rowAad } from '../crypto/row-aad.js';
import type { SecretRepository, SecretRow } from './secret-repository.js';

export interface SigningSecret {
  id: string;
  /** `whsec_...`; shown to the account owner through the operator API. */
  secret: string;
  createdAt: Date;
  /** Null while current; set on the previous secret by a rotation. */
  expiresAt: Date | null;
}

export interface SigningSecretsOptions {
  repository: SecretRepository;
  box: Keyring;
  rotationWindowMs: number;
}

/**
 * Per-account signing secrets: made on first need (first delivery or first look), stored
 * sealed (AAD = account and secret id), rotated by the operator API. After a rotation the
 * previous secret stays active for the rotation window, so deliveries carry both signatures.
 */
export class SigningSecrets {
  constructor(private readonly options: SigningSecretsOptions) {}

  /** Active secrets, oldest first; creates the first one when the account has none. */
  async active(accountId: string): Promise<SigningSecret[]> {
    const rows = await this.options.repository.active(accountId);
    if (rows.length > 0) return rows.map((row) => this.open(accountId, row));
    return this.options.repository.withAccountLock(accountId, async (client) => {
      const again = await this.options.repository.active(accountId, client);
      if (again.length > 0) return again.map((row) => this.open(accountId, row));
      return [await this.create(client, accountId)];
    });
  }

  /** A new current secret; the previous ones expire after the rotation window. */
  rotate(accountId: string): Promise<SigningSecret> {
    return this.options.repository.withAccountLock(accountId, async (client) => {
      await this.options.repository.expireCurrent(client, accountId, this.options.rotationWindowMs);
      return this.create(client, accountId);
    });
  }

  purgeExpired(): Promise<number> {
    return this.options.repository.deleteExpired();
  }

  private async create(client: pg.PoolClient, accountId: string): Promise<SigningSecret> {
    const id = newSecretId();
    const secret = newSigningSecret();
    const sealed = this.options.box.seal(Buffer.from(secret, 'utf8'), rowAad(accountId, id));
    const row = await this.options.repository.insert(client, accountId, id, sealed);
    return { id, secret, createdAt: row.createdAt, expiresAt: row.expiresAt };
  }

  private open(accountId: string, row: SecretRow): SigningSecret {
    const secret = this.options.box.open(row.sealed, rowAad(accountId, row.id)).toString('utf8');
    return { id: row.id, secret, createdAt: row.createdAt, expiresAt: row.expiresAt };
  }
}
