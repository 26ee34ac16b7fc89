import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { Keyring, KeyVersionUnavailableError } from '@gateway/crypto';
import { createTestDatabase } from '@gateway/testing';
import { rowAad } from '../crypto/row-aad.js';
import { dispatcherDatabaseTemplate } from '../db/migrate.js';
import { DeliveryRepository } from '../deliveries/delivery-repository.js';
import { SecretRepository } from './secret-repository.js';
import { MAX_ACTIVE_SECRETS, SigningSecrets } from './signing-secrets.js';

/*
 * ENCRYPTION_KEY rotation against real PostgreSQL: signing secrets and delivery payloads sealed
 * under version 1 still open once v2 is added, new ones are sealed (and recorded) under v2, and
 * a keyring without v1 refuses v1 values with an error naming the version only.
 */

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase(dispatcherDatabaseTemplate);
  pool = new pg.Pool({ connectionString: db.runtimeUrl, max: 3 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const secrets = (spec: string) =>
  new SigningSecrets({
    repository: new SecretRepository(pool),
    box: Keyring.parse(spec),
    rotationWindowMs: 60_000,
    rotationsPerHour: 5,
  });

describe('ENCRYPTION_KEY rotation', () => {
  it('keeps v1 signing secrets readable after rotation, seals new ones with v2', async () => {
    const [first] = await secrets(k1).active('usr_rot');
    const rotated = secrets(`v2:${k2},v1:${k1}`);
    expect((await rotated.active('usr_rot')).map((s) => s.secret)).toEqual([first!.secret]);
    const second = await rotated.rotate('usr_rot');
    const { rows } = await pool.query<{ id: string; secret_key_version: number }>(
      'SELECT id, secret_key_version FROM webhook_secrets WHERE account_id = $1 ORDER BY created_at',
      ['usr_rot'],
    );
    expect(rows).toEqual([
      { id: first!.id, secret_key_version: 1 },
      { id: second.id, secret_key_version: 2 },
    ]);
    const withoutV1 = secrets(`v2:${k2}`).active('usr_rot');
    await expect(withoutV1).rejects.toThrow(KeyVersionUnavailableError);
    await expect(withoutV1).rejects.toThrow('sealed with key version 1, which is not configured');
  });

  it('records the sealing version of delivery payloads and opens with it', async () => {
    const repository = new DeliveryRepository(pool, MAX_ACTIVE_SECRETS);
    const ring = Keyring.parse(`v2:${k2},v1:${k1}`);
    const seal = (spec: string, id: string) =>
      Keyring.parse(spec).seal('{"url":"https://x.example"}', rowAad('usr_rot', id));
    const ids = [`dlv_${randomUUID()}`, `dlv_${randomUUID()}`];
    for (const [index, id] of ids.entries()) {
      await repository.insert({
        id,
        jobId: `job_${id}`,
        accountId: 'usr_rot',
        format: 'A',
        sealed: seal(index === 0 ? k1 : `v2:${k2},v1:${k1}`, id),
        retentionMs: 60_000,
        firstDelayMs: 0,
        traceParent: null,
      });
    }
    const claimed = await repository.claimDue(10, 60_000);
    expect(claimed.map((c) => [c.id, c.sealed?.keyVersion]).sort()).toEqual(
      [
        [ids[0], 1],
        [ids[1], 2],
      ].sort(),
    );
    for (const claim of claimed) {
      const payload = ring.open(claim.sealed!, rowAad(claim.accountId, claim.id));
      expect(payload.toString('utf8')).toBe('{"url":"https://x.example"}');
    }
  });
});
