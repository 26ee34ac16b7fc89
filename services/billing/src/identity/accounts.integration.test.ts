import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LIMITS } from '@gateway/contracts';
import { accountToJson } from './accounts.js';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from './fixtures.suite.js';
import { apiKeySecretAad, sha256Hex } from './secrets.js';

let h: IdentityHarness;
const accounts = () => h.identity.accounts;

beforeAll(async () => {
  h = await setUpIdentity();
});

afterAll(async () => {
  await h?.close();
});

describe('accounts', () => {
  it('creates an active account with defaults and a zero balance row', async () => {
    const account = await accounts().create({ name: '  Sonatrach Labs  ' });
    expect(account).toEqual({
      id: expect.stringMatching(/^usr_[a-z2-7]{20}$/),
      name: 'Sonatrach Labs',
      status: 'active',
      rateLimitPerMinute: 100,
      webhookFormat: 'A',
      createdAt: h.clock.now(),
    });
    const balance = await h.prisma.accountBalance.findUniqueOrThrow({
      where: { accountId: account.id },
    });
    expect(balance).toMatchObject({
      postedCreditsMicroDzd: 0n,
      postedDebitsMicroDzd: 0n,
      pendingMicroDzd: 0n,
    });
    expect(await accounts().get(account.id)).toEqual(account);
    expect(accountToJson(account)).toEqual({
      id: account.id,
      name: 'Sonatrach Labs',
      status: 'active',
      rate_limit_per_minute: 100,
      webhook_format: 'A',
      created_at: '2030-01-01T00:00:10.000Z',
    });
  });

  it('validates the name', async () => {
    for (const name of [undefined, 3, '', '   ', 'x'.repeat(201), 'a\u0000b', 'tab\there']) {
      const error = await gatewayErrorOf(accounts().create({ name }));
      expect(error).toMatchObject({ code: 'invalid_request_body', param: 'name' });
    }
    await expect(accounts().create({ name: 'x'.repeat(200) })).resolves.toBeDefined();
  });

  it('reports an unknown account as resource_not_found', async () => {
    for (const call of [
      () => accounts().get('usr_nope'),
      () => accounts().suspend('usr_nope'),
      () => accounts().patch('usr_nope', { rateLimitPerMinute: 5 }),
      () => accounts().patch('usr_nope', {}),
      () => accounts().createApiKey('usr_nope', { name: 'k' }),
      () => accounts().regenerateApiKey('usr_nope', 'k'),
      () => accounts().deleteApiKey('usr_nope', 'k'),
      () => accounts().listApiKeys('usr_nope'),
    ]) {
      const error = await gatewayErrorOf(call());
      expect(error).toMatchObject({
        code: 'resource_not_found',
        message: 'Account usr_nope not found',
      });
    }
  });

  it('suspends and unsuspends (idempotently)', async () => {
    const { id } = await accounts().create({ name: 'Flaky' });
    expect((await accounts().suspend(id)).status).toBe('suspended');
    expect((await accounts().suspend(id)).status).toBe('suspended');
    expect((await accounts().get(id)).status).toBe('suspended');
    expect((await accounts().unsuspend(id)).status).toBe('active');
    expect((await accounts().unsuspend(id)).status).toBe('active');
  });

  it('patches the rate limit and webhook format within bounds', async () => {
    const { id } = await accounts().create({ name: 'Patched' });
    expect(await accounts().patch(id, { rateLimitPerMinute: 1 })).toMatchObject({
      rateLimitPerMinute: 1,
      webhookFormat: 'A',
    });
    expect(await accounts().patch(id, { webhookFormat: 'B' })).toMatchObject({
      rateLimitPerMinute: 1,
      webhookFormat: 'B',
    });
    expect(
      await accounts().patch(id, { rateLimitPerMinute: 100_000, webhookFormat: 'A' }),
    ).toMatchObject({ rateLimitPerMinute: 100_000, webhookFormat: 'A' });
    expect(await accounts().patch(id, {})).toMatchObject({ rateLimitPerMinute: 100_000 });
    for (const bad of [0, 100_001, 1.5, -3, Number.NaN, '10']) {
      const error = await gatewayErrorOf(
        accounts().patch(id, { rateLimitPerMinute: bad as unknown as number }),
      );
      expect(error).toMatchObject({ code: 'invalid_request_body', param: 'rate_limit_per_minute' });
    }
    for (const bad of ['C', 'a', '', 1]) {
      const error = await gatewayErrorOf(
        accounts().patch(id, { webhookFormat: bad as unknown as 'A' }),
      );
      expect(error).toMatchObject({ code: 'invalid_request_body', param: 'webhook_format' });
    }
    expect(await accounts().get(id)).toMatchObject({
      rateLimitPerMinute: 100_000,
      webhookFormat: 'A',
    });
  });

  it('lists accounts in pages, in creation order', async () => {
    const isolated = h.newIdentity().identity.accounts;
    const before = (await isolated.list({ limit: 200 })).accounts.length;
    const created = [];
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1_000);
      created.push(await isolated.create({ name: `Paged ${i}` }));
    }
    const seen = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await isolated.list({ limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.accounts);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(seen).toHaveLength(before + 5);
    expect(pages).toBe(Math.ceil((before + 5) / 2));
    expect(seen.slice(-5).map((a) => a.id)).toEqual(created.map((a) => a.id));
    expect((await isolated.list()).nextCursor).toBeNull();
    await expect(gatewayErrorOf(isolated.list({ limit: 0 }))).resolves.toMatchObject({
      param: 'limit',
    });
    await expect(gatewayErrorOf(isolated.list({ limit: 201 }))).resolves.toMatchObject({
      param: 'limit',
    });
    await expect(gatewayErrorOf(isolated.list({ cursor: 'garbage' }))).resolves.toMatchObject({
      code: 'invalid_request_body',
      param: 'cursor',
    });
  });
});

describe('API keys', () => {
  it('creates a key shown once; 409 conflict on a duplicate name', async () => {
    const { id } = await accounts().create({ name: 'Keys' });
    const issued = await accounts().createApiKey(id, { name: 'auto' });
    expect(issued).toEqual({ name: 'auto', key: expect.stringMatching(/^sk_live_[\w-]{43}$/) });
    const duplicate = await gatewayErrorOf(accounts().createApiKey(id, { name: 'auto' }));
    expect(duplicate).toMatchObject({ code: 'conflict', param: 'name' });
    // Another account may use the same name.
    const other = await accounts().create({ name: 'Other' });
    await expect(accounts().createApiKey(other.id, { name: 'auto' })).resolves.toBeDefined();
    await accounts().createApiKey(id, { name: 'ci.build-2_x' });
    expect((await accounts().listApiKeys(id)).map((k) => k.name)).toEqual(['auto', 'ci.build-2_x']);
  });

  // Keys per account are bounded, exactly, even when creations race.
  it(`caps an account at ${LIMITS.apiKeysPerAccountMax} keys under concurrent creation`, async () => {
    const { id } = await accounts().create({ name: 'Many keys' });
    const attempts = LIMITS.apiKeysPerAccountMax + 20;
    const results = await Promise.allSettled(
      Array.from({ length: attempts }, (_, i) => accounts().createApiKey(id, { name: `k${i}` })),
    );
    const created = results.filter((result) => result.status === 'fulfilled');
    expect(created).toHaveLength(LIMITS.apiKeysPerAccountMax);
    const refused = results.filter((result) => result.status === 'rejected');
    expect(refused).toHaveLength(20);
    for (const result of refused) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
    }
    expect(await accounts().listApiKeys(id)).toHaveLength(LIMITS.apiKeysPerAccountMax);
    await accounts().deleteApiKey(id, 'k0');
    await expect(accounts().createApiKey(id, { name: 'again' })).resolves.toBeDefined();
  });

  it('validates key names: 1..64 characters from [A-Za-z0-9._-]', async () => {
    const { id } = await accounts().create({ name: 'Names' });
    for (const name of ['', 'x'.repeat(65), 'has space', 'slash/no', 'colon:no', 'é', 7, null]) {
      const error = await gatewayErrorOf(accounts().createApiKey(id, { name }));
      expect(error).toMatchObject({ code: 'invalid_request_body', param: 'name' });
    }
    await expect(accounts().createApiKey(id, { name: 'x'.repeat(64) })).resolves.toBeDefined();
  });

  it('never stores the key or its secret in clear', async () => {
    const { id } = await accounts().create({ name: 'Vault' });
    const { key } = await accounts().createApiKey(id, { name: 'vaulted' });
    const { rows } = await h.sql.query(
      'SELECT * FROM api_keys WHERE account_id = $1 AND name = $2',
      [id, 'vaulted'],
    );
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    expect(row.key_digest).toBe(sha256Hex(key));
    const stored = Object.values(row)
      .map((value) => (Buffer.isBuffer(value) ? value.toString('latin1') : String(value)))
      .join('|');
    const body = key.slice('sk_live_'.length);
    expect(stored).not.toContain(body);
    expect(stored).not.toContain(Buffer.from(key).toString('hex'));
    expect(stored).not.toContain(Buffer.from(key).toString('base64'));
    // ... but the master key opens it, bound to account and key name.
    const sealed = {
      ciphertext: row.secret_ciphertext as Buffer,
      nonce: row.secret_nonce as Buffer,
      tag: row.secret_auth_tag as Buffer,
      keyVersion: row.secret_key_version as number,
    };
    expect(sealed.keyVersion).toBe(1);
    expect(h.keyring.open(sealed, apiKeySecretAad(id, 'vaulted')).toString('utf8')).toBe(key);
    expect(() => h.keyring.open(sealed, apiKeySecretAad(id, 'other'))).toThrow();
  });

  it('regenerates in place: new value, new secret, same name', async () => {
    const { id } = await accounts().create({ name: 'Rotate' });
    const first = await accounts().createApiKey(id, { name: 'main' });
    const before = await h.prisma.apiKey.findUniqueOrThrow({
      where: { accountId_name: { accountId: id, name: 'main' } },
    });
    const second = await accounts().regenerateApiKey(id, 'main');
    expect(second.name).toBe('main');
    expect(second.key).not.toBe(first.key);
    const after = await h.prisma.apiKey.findUniqueOrThrow({
      where: { accountId_name: { accountId: id, name: 'main' } },
    });
    expect(after.id).toBe(before.id);
    expect(after.keyDigest).toBe(sha256Hex(second.key));
    expect(Buffer.from(after.secretNonce).equals(Buffer.from(before.secretNonce))).toBe(false);
    const missing = await gatewayErrorOf(accounts().regenerateApiKey(id, 'nope'));
    expect(missing).toMatchObject({
      code: 'resource_not_found',
      message: "API key 'nope' not found",
    });
  });

  it('deletes a key; a second delete is resource_not_found; the name can be reused', async () => {
    const { id } = await accounts().create({ name: 'Delete' });
    await accounts().createApiKey(id, { name: 'temp' });
    await accounts().deleteApiKey(id, 'temp');
    expect(await accounts().listApiKeys(id)).toEqual([]);
    const again = await gatewayErrorOf(accounts().deleteApiKey(id, 'temp'));
    expect(again).toMatchObject({ code: 'resource_not_found' });
    await expect(accounts().createApiKey(id, { name: 'temp' })).resolves.toBeDefined();
  });
});
