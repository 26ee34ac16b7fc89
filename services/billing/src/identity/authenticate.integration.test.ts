import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { GatewayError } from '@gateway/contracts';
import { sha256Hex } from './secrets.js';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from './fixtures.suite.js';

const YEAR_S = 31_536_000;

let h: IdentityHarness;
let accountId: string;
let rawKey: string;

const bearer = (credential: string) => `Bearer ${credential}`;
const auth = (header: string | undefined) => h.identity.authenticator.authenticate(header);
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const kidFor = (account: string, name: string, prefix = 'service') =>
  `${prefix}:${account}:${Buffer.from(name).toString('base64')}`;

/** A token minted the way a client would, with `jsonwebtoken` and the raw API key. */
function mint(
  payload: Record<string, unknown>,
  options: { key?: string; kid?: string; algorithm?: jwt.Algorithm } = {},
): string {
  return (
    'jwt:' +
    jwt.sign(JSON.parse(JSON.stringify(payload)) as object, options.key ?? rawKey, {
      algorithm: options.algorithm ?? 'HS256',
      keyid: options.kid ?? kidFor(accountId, 'auto'),
      noTimestamp: true,
    })
  );
}

/** A token with an arbitrary header, HMAC-SHA256-signed with `key` (or unsigned). */
function handMade(header: Record<string, unknown>, payload: unknown, key?: string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = key ? createHmac('sha256', key).update(input).digest('base64url') : '';
  return `jwt:${input}.${signature}`;
}

const validPayload = (extra: Record<string, unknown> = {}) => ({
  sub: `service:${accountId}`,
  model: 'org/model-a',
  exp: h.clock.s + 3600,
  ...extra,
});

async function expectCode(header: string | undefined, code: string): Promise<string> {
  const error = await gatewayErrorOf(auth(header));
  expect(error).toBeInstanceOf(GatewayError);
  expect(error.code).toBe(code);
  return error.message;
}

async function newAccountWithKey(name = 'auto') {
  const account = await h.identity.accounts.create({ name: 'Tenant' });
  const key = await h.identity.accounts.createApiKey(account.id, { name });
  return { accountId: account.id, key: key.key };
}

beforeAll(async () => {
  h = await setUpIdentity();
  ({ accountId, key: rawKey } = await newAccountWithKey());
});

afterAll(async () => {
  await h?.close();
});

describe('API keys', () => {
  it('authenticates a valid key', async () => {
    const principal = await auth(bearer(rawKey));
    expect(principal).toEqual({
      accountId,
      kind: 'api_key',
      apiKeyName: 'auto',
      rateLimitPerMinute: 100,
      webhookFormat: 'A',
    });
    // The scheme is case-insensitive (RFC 9110); surrounding blanks are tolerated.
    await expect(auth(`bearer ${rawKey}`)).resolves.toMatchObject({ accountId });
    await expect(auth(`  Bearer   ${rawKey}  `)).resolves.toMatchObject({ accountId });
  });

  it('refuses a missing or blank header', async () => {
    expect(await expectCode(undefined, 'invalid_api_key')).toMatch(/Missing Authorization/);
    await expectCode('', 'invalid_api_key');
    await expectCode('   ', 'invalid_api_key');
  });

  it('refuses another scheme and a Bearer without credential', async () => {
    const basic = `Basic ${Buffer.from(`user:${rawKey}`).toString('base64')}`;
    expect(await expectCode(basic, 'invalid_api_key')).toMatch(/Bearer/);
    await expectCode(rawKey, 'invalid_api_key');
    await expectCode('Bearer', 'invalid_api_key');
    await expectCode('Bearer ', 'invalid_api_key');
    await expectCode(`Bearer ${rawKey} extra`, 'invalid_api_key');
  });

  it('refuses unknown and malformed keys without echoing them', async () => {
    const unknown = `sk_live_${'A'.repeat(43)}`;
    const message = await expectCode(bearer(unknown), 'invalid_api_key');
    expect(message).not.toContain(unknown);
    await expectCode(bearer('sk_live_tooShort'), 'invalid_api_key');
    await expectCode(bearer(`${rawKey}x`), 'invalid_api_key');
    await expectCode(bearer('jwt'), 'invalid_api_key');
  });

  it('refuses a deleted key at once', async () => {
    const { accountId: id, key } = await newAccountWithKey('doomed');
    await expect(auth(bearer(key))).resolves.toMatchObject({ accountId: id });
    await h.identity.accounts.deleteApiKey(id, 'doomed');
    await expectCode(bearer(key), 'invalid_api_key');
  });

  it('refuses the old key after regeneration and accepts the new one', async () => {
    const { accountId: id, key: oldKey } = await newAccountWithKey('rotating');
    const fresh = await h.identity.accounts.regenerateApiKey(id, 'rotating');
    expect(fresh.key).not.toBe(oldKey);
    await expectCode(bearer(oldKey), 'invalid_api_key');
    await expect(auth(bearer(fresh.key))).resolves.toMatchObject({
      accountId: id,
      apiKeyName: 'rotating',
    });
  });

  it('refuses a suspended account with 403 account_suspended, and lets it back after', async () => {
    const { accountId: id, key } = await newAccountWithKey();
    await h.identity.accounts.suspend(id);
    expect(await expectCode(bearer(key), 'account_suspended')).toBe('Account is suspended');
    await h.identity.accounts.unsuspend(id);
    await expect(auth(bearer(key))).resolves.toMatchObject({ accountId: id });
  });

  it('reports the account settings in the principal', async () => {
    const { accountId: id, key } = await newAccountWithKey();
    await h.identity.accounts.patch(id, { rateLimitPerMinute: 7, webhookFormat: 'B' });
    await expect(auth(bearer(key))).resolves.toMatchObject({
      rateLimitPerMinute: 7,
      webhookFormat: 'B',
    });
  });
});

describe('scoped tokens', () => {
  it('authenticates an issued token with its models, limit and expiry', async () => {
    const { token } = await h.identity.scopedTokens.create(accountId, {
      api_key_name: 'auto',
      models: ['org/model-a', 'org/model-b'],
      expires_delta: 600,
      spending_limit: 2.5,
    });
    const principal = await auth(bearer(token));
    const row = await h.prisma.scopedToken.findFirstOrThrow({
      where: { accountId, spendingLimitMicroDzd: 2_500_000n },
    });
    expect(principal).toEqual({
      accountId,
      kind: 'scoped_token',
      apiKeyName: 'auto',
      rateLimitPerMinute: 100,
      webhookFormat: 'A',
      token: {
        id: row.id,
        digest: row.digest,
        models: ['org/model-a', 'org/model-b'],
        spendingLimitMicroDzd: 2_500_000n,
        expiresAt: new Date((h.clock.s + 600) * 1000),
      },
    });
    expect(row.origin).toBe('issued');
  });

  it('accepts a token minted by the client with jsonwebtoken, without writing anything', async () => {
    const token = mint(
      validPayload({ models: ['org/model-a', 'org/model-c'], spending_limit: 1.25 }),
    );
    const digest = sha256Hex(token);
    const principals = await Promise.all(Array.from({ length: 3 }, () => auth(bearer(token))));
    for (const principal of principals) {
      expect(principal.token).toEqual({
        id: null,
        digest,
        models: ['org/model-a', 'org/model-c'],
        spendingLimitMicroDzd: 1_250_000n,
        expiresAt: new Date((h.clock.s + 3600) * 1000),
      });
    }
    // Registered only by an admission that places a hold (admit.test.ts).
    expect(await h.prisma.scopedToken.findUnique({ where: { digest } })).toBeNull();
  });

  it('reads the spec’s single `model` claim; `*` means any model', async () => {
    const single = await auth(bearer(mint(validPayload({ model: 'org/only' }))));
    expect(single.token).toMatchObject({ models: ['org/only'], spendingLimitMicroDzd: null });
    const any = await auth(bearer(mint(validPayload({ model: '*' }))));
    expect(any.token?.models).toBeNull();
  });

  it('refuses alg none, HS512 and RS256-looking headers with invalid_api_key', async () => {
    const kid = kidFor(accountId, 'auto');
    const none = handMade({ alg: 'none', typ: 'JWT', kid }, validPayload());
    expect(await expectCode(bearer(none), 'invalid_api_key')).toMatch(/HS256/);
    const noneSigned = handMade({ alg: 'none', typ: 'JWT', kid }, validPayload(), rawKey);
    await expectCode(bearer(noneSigned), 'invalid_api_key');
    const hs512 = mint(validPayload(), { algorithm: 'HS512' });
    expect(
      JSON.parse(Buffer.from(hs512.slice(4).split('.')[0]!, 'base64url').toString()),
    ).toMatchObject({
      alg: 'HS512',
    });
    expect(await expectCode(bearer(hs512), 'invalid_api_key')).toMatch(/only HS256/);
    // Algorithm confusion: an "RS256" header whose signature is an HMAC with the key.
    const rs256 = handMade({ alg: 'RS256', typ: 'JWT', kid }, validPayload(), rawKey);
    expect(await expectCode(bearer(rs256), 'invalid_api_key')).toMatch(/only HS256/);
    for (const alg of ['hs256', 'HS256 ', 'HS384', undefined, ['HS256']]) {
      const token = handMade({ alg, typ: 'JWT', kid }, validPayload(), rawKey);
      expect(await expectCode(bearer(token), 'invalid_api_key')).toMatch(/only HS256/);
    }
    // The same hand-made construction with alg HS256 does verify: the refusals above are the alg.
    const ok = handMade({ alg: 'HS256', typ: 'JWT', kid }, validPayload(), rawKey);
    await expect(auth(bearer(ok))).resolves.toMatchObject({ kind: 'scoped_token' });
  });

  it('refuses malformed kids, and kids naming no existing key', async () => {
    const malformed = [
      undefined,
      '',
      42,
      `service:${accountId}`,
      `other:${accountId}:${Buffer.from('auto').toString('base64')}`,
      `service:${accountId}:${Buffer.from('auto').toString('base64')}:extra`,
      `service:${accountId}:not base64!`,
      `service:${accountId}:${Buffer.from('bad name!').toString('base64')}`,
    ];
    for (const kid of malformed) {
      const header =
        kid === undefined ? { alg: 'HS256', typ: 'JWT' } : { alg: 'HS256', typ: 'JWT', kid };
      const message = await expectCode(
        bearer(handMade(header, validPayload(), rawKey)),
        'invalid_api_key',
      );
      expect(message).toBe('Scoped token kid must be service:<user_id>:<base64(api_key_name)>');
    }
    const unknownKey = [
      `service:${accountId}:${Buffer.from('missing').toString('base64')}`,
      `service:usr_aaaaaaaaaaaaaaaaaaaa:${Buffer.from('auto').toString('base64')}`,
    ];
    for (const kid of unknownKey) {
      const token = handMade({ alg: 'HS256', typ: 'JWT', kid }, validPayload(), rawKey);
      expect(await expectCode(bearer(token), 'invalid_api_key')).toBe(
        'Scoped token signature is not valid',
      );
    }
    // A kid naming another account's key cannot be satisfied with this account's key.
    const other = await newAccountWithKey();
    const crossed = mint(validPayload({ sub: `service:${other.accountId}` }), {
      kid: kidFor(other.accountId, 'auto'),
    });
    await expectCode(bearer(crossed), 'invalid_api_key');
  });

  it('refuses structurally broken tokens', async () => {
    for (const token of [
      'jwt:',
      'jwt:abc',
      'jwt:a.b',
      'jwt:a.b.c.d',
      `jwt:${b64url({ alg: 'HS256' })}.%%%.sig`,
      `jwt:${Buffer.from('not json').toString('base64url')}.${b64url(validPayload())}.sig`,
      `jwt:${b64url([1, 2])}.${b64url(validPayload())}.sig`,
    ]) {
      await expectCode(bearer(token), 'invalid_api_key');
    }
    const kid = kidFor(accountId, 'auto');
    // A JSON payload that is not an object, and a header with critical extensions.
    await expectCode(bearer(handMade({ alg: 'HS256', kid }, 'string', rawKey)), 'invalid_api_key');
    await expectCode(
      bearer(handMade({ alg: 'HS256', kid, crit: ['exp'] }, validPayload(), rawKey)),
      'invalid_api_key',
    );
    await expectCode(
      bearer(handMade({ alg: 'HS256', kid, typ: 'at+jwt' }, validPayload(), rawKey)),
      'invalid_api_key',
    );
  });

  it('refuses a bad signature, a wrong sub, and a future nbf', async () => {
    const other = await newAccountWithKey();
    await expectCode(bearer(mint(validPayload(), { key: other.key })), 'invalid_api_key');
    const token = mint(validPayload());
    await expectCode(bearer(`${token.slice(0, -2)}AA`), 'invalid_api_key');
    await expectCode(bearer(mint(validPayload({ sub: 'service:usr_other' }))), 'invalid_api_key');
    await expectCode(bearer(mint(validPayload({ sub: undefined }))), 'invalid_api_key');
    await expectCode(bearer(mint(validPayload({ nbf: h.clock.s + 3600 }))), 'invalid_api_key');
    await expect(auth(bearer(mint(validPayload({ nbf: h.clock.s - 10 }))))).resolves.toBeDefined();
  });

  it('requires exp, as an integer at most 1 year (+ skew) ahead', async () => {
    expect(
      await expectCode(bearer(mint(validPayload({ exp: undefined }))), 'invalid_api_key'),
    ).toMatch(/exp/);
    await expectCode(bearer(mint(validPayload({ exp: h.clock.s + 100.5 }))), 'invalid_api_key');
    await expectCode(
      bearer(
        handMade(
          { alg: 'HS256', kid: kidFor(accountId, 'auto') },
          validPayload({ exp: String(h.clock.s + 100) }),
          rawKey,
        ),
      ),
      'invalid_api_key',
    );
    expect(
      await expectCode(
        bearer(mint(validPayload({ exp: h.clock.s + YEAR_S + 61 }))),
        'invalid_api_key',
      ),
    ).toMatch(/1 year/);
    await expect(
      auth(bearer(mint(validPayload({ exp: h.clock.s + YEAR_S })))),
    ).resolves.toBeDefined();
    await expect(
      auth(bearer(mint(validPayload({ exp: h.clock.s + YEAR_S + 60 })))),
    ).resolves.toBeDefined();
  });

  it('refuses malformed models and spending_limit claims', async () => {
    await expectCode(bearer(mint(validPayload({ models: [] }))), 'invalid_api_key');
    await expectCode(bearer(mint(validPayload({ models: [1] }))), 'invalid_api_key');
    await expectCode(bearer(mint(validPayload({ spending_limit: -1 }))), 'invalid_api_key');
    await expectCode(bearer(mint(validPayload({ spending_limit: '10' }))), 'invalid_api_key');
  });

  it('reports an expired token with token_expired and its expiry time in ISO 8601', async () => {
    const exp = h.clock.s + 30;
    const issued = await h.identity.scopedTokens.create(accountId, {
      api_key_name: 'auto',
      expires_at: exp,
    });
    const minted = mint(validPayload({ exp }));
    await expect(auth(bearer(issued.token))).resolves.toBeDefined();
    const start = h.clock.ms;
    h.clock.set(exp * 1000); // exp itself is already expired
    try {
      const iso = new Date(exp * 1000).toISOString().replace('.000Z', 'Z');
      expect(iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(await expectCode(bearer(issued.token), 'token_expired')).toBe(
        `Scoped token expired at ${iso}`,
      );
      expect(await expectCode(bearer(minted), 'token_expired')).toContain(iso);
    } finally {
      h.clock.set(start);
    }
  });

  it('refuses a revoked token with token_revoked (issued and client-minted)', async () => {
    const { token } = await h.identity.scopedTokens.create(accountId, { api_key_name: 'auto' });
    await auth(bearer(token));
    await h.identity.scopedTokens.revoke(token, { accountId });
    await expectCode(bearer(token), 'token_revoked');

    // Never used before its revocation: registered as revoked.
    const minted = mint(validPayload({ model: 'org/revoked-before-use' }));
    await h.identity.scopedTokens.revoke(minted, { accountId });
    await expectCode(bearer(minted), 'token_revoked');
  });

  it('refuses tokens of a suspended account with account_suspended, after expiry and revocation', async () => {
    const tenant = await newAccountWithKey();
    const { token } = await h.identity.scopedTokens.create(tenant.accountId, {
      api_key_name: 'auto',
      expires_delta: 100,
    });
    const revoked = (
      await h.identity.scopedTokens.create(tenant.accountId, { api_key_name: 'auto' })
    ).token;
    await h.identity.scopedTokens.revoke(revoked, { accountId: tenant.accountId });
    await h.identity.accounts.suspend(tenant.accountId);
    await expectCode(bearer(token), 'account_suspended');
    await expectCode(bearer(revoked), 'token_revoked');
    const start = h.clock.ms;
    h.clock.advance(200_000);
    try {
      await expectCode(bearer(token), 'token_expired');
    } finally {
      h.clock.set(start);
    }
  });

  it('refuses tokens of a regenerated or deleted key', async () => {
    const tenant = await newAccountWithKey('signer');
    const issued = (
      await h.identity.scopedTokens.create(tenant.accountId, { api_key_name: 'signer' })
    ).token;
    const minted = mint(
      { sub: `service:${tenant.accountId}`, model: '*', exp: h.clock.s + 100 },
      { key: tenant.key, kid: kidFor(tenant.accountId, 'signer') },
    );
    await expect(auth(bearer(issued))).resolves.toBeDefined();
    await expect(auth(bearer(minted))).resolves.toBeDefined();

    const fresh = await h.identity.accounts.regenerateApiKey(tenant.accountId, 'signer');
    await expectCode(bearer(issued), 'invalid_api_key');
    await expectCode(bearer(minted), 'invalid_api_key');
    const reissued = (
      await h.identity.scopedTokens.create(tenant.accountId, { api_key_name: 'signer' })
    ).token;
    await expect(auth(bearer(reissued))).resolves.toBeDefined();
    const remint = mint(
      { sub: `service:${tenant.accountId}`, model: '*', exp: h.clock.s + 100 },
      { key: fresh.key, kid: kidFor(tenant.accountId, 'signer') },
    );
    await expect(auth(bearer(remint))).resolves.toBeDefined();

    await h.identity.accounts.deleteApiKey(tenant.accountId, 'signer');
    await expectCode(bearer(reissued), 'invalid_api_key');
    await expectCode(bearer(remint), 'invalid_api_key');
  });

  it('never echoes the token in error messages', async () => {
    const token = mint(validPayload({ exp: undefined }));
    expect(await expectCode(bearer(token), 'invalid_api_key')).not.toContain(token.slice(4, 30));
  });
});

describe('configurable prefix', () => {
  it('uses the configured kid/sub prefix instead of `service`', async () => {
    const custom = h.newIdentity({ tokenPrefix: 'acme' }).identity;
    const issued = (await custom.scopedTokens.create(accountId, { api_key_name: 'auto' })).token;
    const header = JSON.parse(Buffer.from(issued.slice(4).split('.')[0]!, 'base64url').toString());
    expect(header.kid).toBe(kidFor(accountId, 'auto', 'acme'));
    await expect(custom.authenticator.authenticate(bearer(issued))).resolves.toMatchObject({
      kind: 'scoped_token',
    });
    // Under the default prefix the same token's kid does not parse.
    await expectCode(bearer(issued), 'invalid_api_key');
    const minted = mint(
      { sub: `acme:${accountId}`, model: '*', exp: h.clock.s + 100 },
      { kid: kidFor(accountId, 'auto', 'acme') },
    );
    await expect(custom.authenticator.authenticate(bearer(minted))).resolves.toBeDefined();
  });
});
