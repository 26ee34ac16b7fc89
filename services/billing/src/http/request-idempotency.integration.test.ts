import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Keyring } from '@gateway/crypto';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from '../identity/fixtures.suite.js';
import type { IdempotencyRef, StoredResponse } from '@gateway/contracts';
import { REQUEST_IDEMPOTENCY_SCOPE, RequestIdempotency } from './request-idempotency.js';

/*
 * Stored Idempotency-Key answers against real PostgreSQL: sealed at rest (a minted token never
 * lies in the row), replayed byte for byte, refused when altered or moved, readable across a
 * MASTER_KEY rotation, and purged once their retention ends.
 */

const HOUR_MS = 3_600_000;
const TTL_MS = 24 * HOUR_MS;
const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');

let h: IdentityHarness;

beforeAll(async () => {
  h = await setUpIdentity();
});

afterAll(async () => {
  await h?.close();
});

const store = (keyring = Keyring.parse(k1)) =>
  new RequestIdempotency({
    run: (work) => h.identity.store.transaction(work),
    clock: h.clock.now,
    keyring,
    ttlMs: TTL_MS,
  });

const ref = (key: string, body = 'body'): IdempotencyRef => ({
  accountId: 'usr_idem',
  key,
  requestHash: createHash('sha256').update(body).digest('hex'),
});

const mintedAnswer = (): { token: string; response: StoredResponse } => {
  const token = `jwt:${randomBytes(48).toString('base64url')}`;
  const body = JSON.stringify({ token, expires_at: '2030-01-02T00:00:00Z' });
  return {
    token,
    response: { status: 200, contentType: 'application/json', body, encoding: 'utf8' },
  };
};

async function storeAnswer(key: string, keyring?: Keyring) {
  const answer = mintedAnswer();
  const idempotency = store(keyring);
  expect(await idempotency.claim(ref(key), 60_000)).toEqual({ outcome: 'claimed' });
  await idempotency.complete(ref(key), answer.response);
  return answer;
}

/** Every column of the record as raw bytes/text, the way someone reading the database sees it. */
async function rowText(key: string): Promise<string> {
  const { rows } = await h.sql.query<Record<string, unknown>>(
    'SELECT * FROM idempotency_records WHERE scope = $1 AND key = $2',
    [REQUEST_IDEMPOTENCY_SCOPE, `usr_idem ${key}`],
  );
  expect(rows).toHaveLength(1);
  return Object.values(rows[0]!)
    .map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : JSON.stringify(v)))
    .join('|');
}

describe('stored Idempotency-Key answers', () => {
  it('keep no plaintext in the row and replay the exact answer', async () => {
    const { token, response } = await storeAnswer('minted');
    const stored = await rowText('minted');
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice(4, 30));
    expect(stored).not.toContain(Buffer.from(token).toString('base64').slice(0, 30));
    expect(await store().claim(ref('minted'), 60_000)).toEqual({ outcome: 'replay', response });
  });

  it('fail closed when the sealed answer is altered or moved to another record', async () => {
    await storeAnswer('tampered');
    await h.sql.query(
      `UPDATE idempotency_records
          SET response_ciphertext = set_byte(response_ciphertext, 0,
                                             get_byte(response_ciphertext, 0) # 1)
        WHERE key = 'usr_idem tampered'`,
    );
    const altered = await gatewayErrorOf(store().claim(ref('tampered'), 60_000));
    expect([altered.code, altered.message]).toEqual([
      'internal_error',
      'The answer stored for this Idempotency-Key cannot be opened.',
    ]);

    await storeAnswer('source');
    await store().claim(ref('target'), 60_000);
    await store().complete(ref('target'), mintedAnswer().response);
    await h.sql.query(
      `UPDATE idempotency_records AS t
          SET response_ciphertext = s.response_ciphertext, response_nonce = s.response_nonce,
              response_tag = s.response_tag
         FROM idempotency_records AS s
        WHERE s.key = 'usr_idem source' AND t.key = 'usr_idem target'`,
    );
    const moved = await gatewayErrorOf(store().claim(ref('target'), 60_000));
    expect(moved.code).toBe('internal_error');
  });

  it('replay across a MASTER_KEY rotation and record the sealing version', async () => {
    const { response } = await storeAnswer('rotated', Keyring.parse(k1));
    const rotated = Keyring.parse(`v2:${k2},v1:${k1}`);
    expect(await store(rotated).claim(ref('rotated'), 60_000)).toEqual({
      outcome: 'replay',
      response,
    });
    await storeAnswer('after-rotation', rotated);
    const { rows } = await h.sql.query<{ key: string; response_key_version: number }>(
      `SELECT key, response_key_version FROM idempotency_records
        WHERE key IN ('usr_idem rotated', 'usr_idem after-rotation') ORDER BY key`,
    );
    expect(rows.map((r) => r.response_key_version)).toEqual([2, 1]);
    const failed = await gatewayErrorOf(store(Keyring.parse(`v2:${k2}`)).claim(ref('rotated'), 1));
    expect(failed.code).toBe('internal_error');
  });

  it('still replays a plaintext record written by the previous release', async () => {
    const { response } = mintedAnswer();
    await h.sql.query(
      `INSERT INTO idempotency_records
         (scope, key, request_hash, response_status, response_body, created_at, expires_at)
       VALUES ($1, 'usr_idem legacy', $2, 200, $3, $4, $5)`,
      [
        REQUEST_IDEMPOTENCY_SCOPE,
        ref('legacy').requestHash,
        JSON.stringify(response),
        h.clock.now(),
        new Date(h.clock.ms + HOUR_MS),
      ],
    );
    expect(await store().claim(ref('legacy'), 60_000)).toEqual({ outcome: 'replay', response });
  });

  it('are purged, in every scope, once their retention ends', async () => {
    await storeAnswer('expiring');
    await h.sql.query(
      `INSERT INTO idempotency_records
         (scope, key, request_hash, response_status, response_body, created_at, expires_at)
       SELECT 'credit', 'bulk-' || n, 'h', 200, '{}', $1, $2 FROM generate_series(1, 2500) AS n`,
      [h.clock.now(), new Date(h.clock.ms + HOUR_MS)],
    );
    const count = async () =>
      Number((await h.sql.query('SELECT count(*) FROM idempotency_records')).rows[0].count);
    const total = await count();
    expect(await store().purgeExpired()).toBe(0);
    h.clock.advance(2 * HOUR_MS);
    const purged = await store().purgeExpired();
    expect(purged).toBeGreaterThanOrEqual(2500);
    expect(await count()).toBe(total - purged);
    h.clock.advance(TTL_MS);
    await store().purgeExpired();
    expect(await count()).toBe(0);
  });
});
