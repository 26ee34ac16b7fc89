import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Keyring, KeyVersionUnavailableError } from '@gateway/crypto';
import { setUpIdentity, type IdentityHarness } from './fixtures.suite.js';

/*
 * MASTER_KEY rotation against real PostgreSQL: API-key secrets sealed under version 1 keep
 * working after v2 is added, new secrets are sealed (and recorded) under v2, and a keyring
 * without v1 refuses v1 secrets with an error naming the version only.
 */

let h: IdentityHarness;
const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');

beforeAll(async () => {
  h = await setUpIdentity();
});

afterAll(async () => {
  await h?.close();
});

const storedVersion = async (accountId: string, name: string) => {
  const { rows } = await h.sql.query<{ secret_key_version: number }>(
    'SELECT secret_key_version FROM api_keys WHERE account_id = $1 AND name = $2',
    [accountId, name],
  );
  return rows[0]?.secret_key_version;
};

describe('MASTER_KEY rotation', () => {
  it('opens v1 secrets after rotation to v2,v1, seals new ones with v2, and needs v1 for v1 data', async () => {
    const before = h.newIdentity({ keyring: Keyring.parse(k1) }).identity;
    const { id } = await before.accounts.create({ name: 'Rotating' });
    await before.accounts.createApiKey(id, { name: 'old' });
    await before.accounts.createApiKey(id, { name: 'kept' });
    expect(await storedVersion(id, 'old')).toBe(1);

    const rotated = h.newIdentity({ keyring: Keyring.parse(`v2:${k2},v1:${k1}`) }).identity;
    // Minting signs with the key's secret: it opened the v1 seal.
    expect((await rotated.scopedTokens.create(id, { api_key_name: 'old' })).token).toMatch(/^jwt:/);
    await rotated.accounts.createApiKey(id, { name: 'new' });
    expect(await storedVersion(id, 'new')).toBe(2);
    await rotated.accounts.regenerateApiKey(id, 'old');
    expect(await storedVersion(id, 'old')).toBe(2);

    const withoutV1 = h.newIdentity({ keyring: Keyring.parse(`v2:${k2}`) }).identity;
    const refused = withoutV1.scopedTokens.create(id, { api_key_name: 'kept' });
    await expect(refused).rejects.toThrow(KeyVersionUnavailableError);
    await expect(refused).rejects.toThrow('sealed with key version 1, which is not configured');
    expect((await withoutV1.scopedTokens.create(id, { api_key_name: 'new' })).token).toMatch(
      /^jwt:/,
    );
  });
});
