import type pg from 'pg';
import { GatewayError } from '@gateway/contracts';
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
  /** Rotations an account may make per `ROTATION_LIMIT_WINDOW_MS` (SECRET_ROTATIONS_PER_HOUR). */
  rotationsPerHour: number;
}

/** The current secret and at most one previous one (in its rotation window) sign. */
export const MAX_ACTIVE_SECRETS = 2;
/** The rotation limit counts the rotations of the last hour. */
export const ROTATION_LIMIT_WINDOW_MS = 3_600_000;

/**
 * Per-account signing secrets: made on first need (first delivery or first look), stored
 * sealed (AAD = account and secret id), rotated by the operator API and the dashboard.
 *
 * At most two are active: the current one and the previous one. A rotation makes the current
 * secret the previous one, signing for the rotation window, so a receiver still verifying with
 * it keeps verifying; a previous secret still in its window when the next rotation comes is
 * deleted at once (it had already been replaced once). "Expire the previous secret now" deletes
 * the previous one: from the next attempt on, deliveries carry the current secret's signature
 * only. Rotations are limited per account (`rotationsPerHour`): 429 with `Retry-After`.
 */
export class SigningSecrets {
  constructor(private readonly options: SigningSecretsOptions) {}

  /** Active secrets (at most two), oldest first; creates the first one when there is none. */
  async active(accountId: string): Promise<SigningSecret[]> {
    const { repository } = this.options;
    const rows = await repository.active(accountId, MAX_ACTIVE_SECRETS);
    if (rows.length > 0) return rows.map((row) => this.open(accountId, row));
    return repository.withAccountLock(accountId, async (client) => {
      const again = await repository.active(accountId, MAX_ACTIVE_SECRETS, client);
      if (again.length > 0) return again.map((row) => this.open(accountId, row));
      return [await this.create(client, accountId)];
    });
  }

  /**
   * The secrets a delivery's claim read (`ClaimedDelivery.secrets`), opened; when the account had
   * none then, `active` (which creates the first one).
   */
  async claimed(accountId: string, rows: readonly SecretRow[]): Promise<SigningSecret[]> {
    if (rows.length === 0) return this.active(accountId);
    return rows.map((row) => this.open(accountId, row));
  }

  /**
   * A new current secret. The current one becomes the previous one and signs until the
   * rotation window ends; an older previous one is deleted. Refused with 429
   * `rate_limit_exceeded` (and `Retry-After`) past the account's rotations per hour.
   */
  rotate(accountId: string): Promise<SigningSecret> {
    const { repository, rotationsPerHour, rotationWindowMs } = this.options;
    return repository.withAccountLock(accountId, async (client) => {
      const retryAfterS = await repository.rotationRetryAfterS(
        client,
        accountId,
        rotationsPerHour,
        ROTATION_LIMIT_WINDOW_MS,
      );
      if (retryAfterS !== null) {
        throw new GatewayError(
          'rate_limit_exceeded',
          `At most ${rotationsPerHour} webhook secret rotations per hour; retry later`,
          { details: { retryAfterS } },
        );
      }
      await repository.deleteAllButNewest(client, accountId);
      await repository.expireCurrent(client, accountId, rotationWindowMs);
      const created = await this.create(client, accountId);
      await repository.recordRotation(client, accountId);
      return created;
    });
  }

  /**
   * Ends the previous secret's window now (deletes it): only the current secret signs from the
   * next attempt on. Returns how many secrets stopped (0 when there was no previous one).
   */
  expirePrevious(accountId: string): Promise<number> {
    const { repository } = this.options;
    return repository.withAccountLock(accountId, (client) =>
      repository.deleteAllButNewest(client, accountId),
    );
  }

  async purgeExpired(): Promise<number> {
    await this.options.repository.deleteRotationsBefore(ROTATION_LIMIT_WINDOW_MS);
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
