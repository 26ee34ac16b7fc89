import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import Stripe from 'stripe';
import { Keyring } from '@gateway/crypto';
import { createTestDatabase } from '@gateway/testing';
import { newSecretId, newSigningSecret } from '../crypto/ids.js';
import { rowAad } from '../crypto/row-aad.js';
import { SecretRepository } from '../secrets/secret-repository.js';
import { SigningSecrets } from '../secrets/signing-secrets.js';
import { webhookHeaders } from '../signing/signature-headers.js';
import { MIGRATIONS_DIR, migrateDatabase } from './migrate.js';

/*
 * Migration 003 trims what earlier releases left: accounts with more than two active signing
 * secrets keep the newest two (the current one, which receivers that switched verify with, and
 * the newest previous one, its window unchanged). The database is first brought to migration 2,
 * filled as 25 rotations of the old code would have left it, then migrated to the end.
 */

const stripe = new Stripe('sk_test_unused');
const ring = Keyring.parse(randomBytes(32).toString('base64'));
const HOUR_MS = 3_600_000;

let db: { url: string; drop(): Promise<void> };
let pool: pg.Pool;
let beforeDir: string;

interface Seeded {
  id: string;
  secret: string;
}

/** One row as the old code stored it: sealed, created `ageMs` ago, ending at `expiresInMs`. */
async function seed(accountId: string, ageMs: number, expiresInMs: number | null) {
  const id = newSecretId();
  const secret = newSigningSecret();
  const sealed = ring.seal(Buffer.from(secret, 'utf8'), rowAad(accountId, id));
  await pool.query(
    `INSERT INTO webhook_secrets
       (id, account_id, secret_ciphertext, secret_nonce, secret_tag, secret_key_version,
        created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6,
             clock_timestamp() - $7 * interval '1 millisecond',
             clock_timestamp() + $8 * interval '1 millisecond')`,
    [
      id,
      accountId,
      sealed.ciphertext,
      sealed.nonce,
      sealed.tag,
      sealed.keyVersion,
      ageMs,
      expiresInMs,
    ],
  );
  return { id, secret };
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  beforeDir = mkdtempSync(path.join(tmpdir(), 'dispatcher-migrations-before-'));
  for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => /^00[12]_/.test(f))) {
    cpSync(path.join(MIGRATIONS_DIR, file), path.join(beforeDir, file));
  }
  await migrateDatabase(db.url, { migrationsDir: beforeDir });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
  rmSync(beforeDir, { recursive: true, force: true });
});

describe('migration 003: trimming piled-up signing secrets', () => {
  it('keeps the newest two active secrets per account and deliveries verify with the current one', async () => {
    // 25 rotations, one a minute: 26 active secrets, the newest current.
    const piled: Seeded[] = [];
    for (let i = 0; i < 26; i++) {
      const ageMs = (26 - i) * 60_000;
      piled.push(await seed('usr_piled', ageMs, i === 25 ? null : 24 * HOUR_MS - ageMs));
    }
    const expiredLongAgo = await seed('usr_piled', 48 * HOUR_MS, -HOUR_MS);
    const single = await seed('usr_single', 60_000, null);
    const pair = [await seed('usr_pair', 120_000, HOUR_MS), await seed('usr_pair', 60_000, null)];

    await migrateDatabase(db.url);

    const secrets = new SigningSecrets({
      repository: new SecretRepository(pool),
      box: ring,
      rotationWindowMs: 24 * HOUR_MS,
      rotationsPerHour: 5,
    });
    const ids = async (accountId: string) =>
      (
        await pool.query<{ id: string }>(
          `SELECT id FROM webhook_secrets
          WHERE account_id = $1 AND (expires_at IS NULL OR expires_at > clock_timestamp())
          ORDER BY created_at`,
          [accountId],
        )
      ).rows.map((row) => row.id);
    expect(await ids('usr_piled')).toEqual(piled.slice(-2).map((s) => s.id));
    expect(await ids('usr_single')).toEqual([single.id]);
    expect(await ids('usr_pair')).toEqual(pair.map((s) => s.id));
    // An expired row is the tick's to purge, as before.
    const expired = await pool.query('SELECT 1 FROM webhook_secrets WHERE id = $1', [
      expiredLongAgo.id,
    ]);
    expect(expired.rowCount).toBe(1);

    const active = await secrets.active('usr_piled');
    expect(active.map((s) => s.secret)).toEqual(piled.slice(-2).map((s) => s.secret));
    expect(active[1]!.expiresAt).toBeNull();
    const body = Buffer.from('{"id":"whd_x","status":"succeeded"}');
    const timestampS = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders({
      format: 'A',
      deliveryId: 'whd_7a1f0c2e-4b7d-4d44-9a36-0d7e3c2b1a00',
      body,
      timestampS,
      secrets: active.map((s) => s.secret),
    });
    const header = headers['X-Service-Signature']!;
    expect(header.match(/v1=/g)).toHaveLength(2);
    const current = piled.at(-1)!.secret;
    expect(stripe.webhooks.signature!.verifyHeader(body.toString(), header, current, 300)).toBe(
      true,
    );
  });
});
