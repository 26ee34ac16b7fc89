import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from './fixtures.suite.js';
import { sha256Hex } from './secrets.js';

const YEAR_S = 31_536_000;

let h: IdentityHarness;
let accountId: string;
let rawKey: string;

const tokens = () => h.identity.scopedTokens;
const kid = (account: string, name: string) =>
  `service:${account}:${Buffer.from(name).toString('base64')}`;

function decodeParts(token: string) {
  expect(token.startsWith('jwt:')).toBe(true);
  const [header, payload, signature] = token.slice(4).split('.') as [string, string, string];
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>,
    signature,
  };
}

beforeAll(async () => {
  h = await setUpIdentity();
  accountId = (await h.identity.accounts.create({ name: 'Issuer' })).id;
  rawKey = (await h.identity.accounts.createApiKey(accountId, { name: 'auto' })).key;
});

afterAll(async () => {
  await h?.close();
});

describe('create', () => {
  it('issues jwt: + an HS256 JWT with the spec header and payload, signed with the key', async () => {
    const { token } = await tokens().create(accountId, {
      api_key_name: 'auto',
      models: ['org/model-a', 'org/model-b', 'org/model-a'],
      expires_delta: 3600,
      spending_limit: 12.5,
    });
    const { header, payload } = decodeParts(token);
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT', kid: kid(accountId, 'auto') });
    expect(Object.keys(header)).toEqual(['alg', 'typ', 'kid']);
    expect(payload).toEqual({
      sub: `service:${accountId}`,
      model: 'org/model-a',
      models: ['org/model-a', 'org/model-b'],
      exp: h.clock.s + 3600,
      spending_limit: 12.5,
      jti: expect.stringMatching(/^[\w-]{22}$/),
    });
    // Any standard JWT library verifies it with the raw key.
    expect(
      jwt.verify(token.slice(4), rawKey, { algorithms: ['HS256'], ignoreExpiration: true }),
    ).toEqual(payload);
    const row = await h.prisma.scopedToken.findUniqueOrThrow({
      where: { digest: sha256Hex(token) },
    });
    expect(row).toMatchObject({
      id: expect.stringMatching(/^tok_[a-z2-7]{20}$/),
      accountId,
      apiKeyName: 'auto',
      models: ['org/model-a', 'org/model-b'],
      expiresAt: new Date((h.clock.s + 3600) * 1000),
      spendingLimitMicroDzd: 12_500_000n,
      spentMicroDzd: 0n,
      origin: 'issued',
      revokedAt: null,
    });
  });

  it('defaults to any model, no limit and 1 year; identical requests give distinct tokens', async () => {
    const first = await tokens().create(accountId, { api_key_name: 'auto' });
    const second = await tokens().create(accountId, { api_key_name: 'auto' });
    expect(first.token).not.toBe(second.token);
    const { payload } = decodeParts(first.token);
    expect(payload).toEqual({
      sub: `service:${accountId}`,
      model: '*',
      exp: h.clock.s + YEAR_S,
      jti: expect.any(String),
    });
    const row = await h.prisma.scopedToken.findUniqueOrThrow({
      where: { digest: sha256Hex(first.token) },
    });
    expect(row).toMatchObject({ models: [], spendingLimitMicroDzd: null });
  });

  it('takes expires_at as an absolute expiry, at most 1 year ahead', async () => {
    const { token } = await tokens().create(accountId, {
      api_key_name: 'auto',
      expires_at: h.clock.s + YEAR_S,
    });
    expect(decodeParts(token).payload.exp).toBe(h.clock.s + YEAR_S);
    for (const body of [
      { api_key_name: 'auto', expires_at: h.clock.s + YEAR_S + 1 },
      { api_key_name: 'auto', expires_at: h.clock.s },
      { api_key_name: 'auto', expires_delta: YEAR_S + 1 },
      { api_key_name: 'auto', expires_delta: 0 },
      { api_key_name: 'auto', expires_delta: 10, expires_at: h.clock.s + 10 },
    ]) {
      const error = await gatewayErrorOf(tokens().create(accountId, body));
      expect(error.code).toBe('invalid_request_body');
    }
  });

  it('validates the body', async () => {
    for (const [body, param] of [
      [{}, 'api_key_name'],
      [{ api_key_name: 'auto', models: [] }, 'models'],
      [{ api_key_name: 'auto', spending_limit: -1 }, 'spending_limit'],
      [{ api_key_name: 'auto', spending_limit: 0.0000001 }, 'spending_limit'],
      [{ api_key_name: 'auto', spending_limt: 5 }, 'spending_limt'],
    ] as const) {
      const error = await gatewayErrorOf(tokens().create(accountId, body));
      expect(error).toMatchObject({ code: 'invalid_request_body', param });
    }
  });

  it('refuses a token too long for an Authorization header, naming models, and registers nothing', async () => {
    const before = await h.prisma.scopedToken.count({ where: { accountId } });
    const models = Array.from({ length: 40 }, (_v, i) => `org/${'m'.repeat(150)}-${i}`);
    const error = await gatewayErrorOf(
      tokens().create(accountId, { api_key_name: 'auto', models }),
    );
    expect(error).toMatchObject({ code: 'invalid_request_body', param: 'models' });
    expect(error.message).toMatch(/more than the 8000 an Authorization header carries/);
    expect(await h.prisma.scopedToken.count({ where: { accountId } })).toBe(before);
    // Fewer models fit.
    const { token } = await tokens().create(accountId, {
      api_key_name: 'auto',
      models: models.slice(0, 10),
    });
    expect(token.length).toBeLessThanOrEqual(8_000);
  });

  it('answers 404 resource_not_found when the account has no key of that name', async () => {
    const error = await gatewayErrorOf(tokens().create(accountId, { api_key_name: 'nope' }));
    expect(error).toMatchObject({ code: 'resource_not_found', param: 'api_key_name' });
    // Another account's key of the same name is not usable either.
    const other = await h.identity.accounts.create({ name: 'Other' });
    await h.identity.accounts.createApiKey(other.id, { name: 'only-theirs' });
    const crossed = await gatewayErrorOf(
      tokens().create(accountId, { api_key_name: 'only-theirs' }),
    );
    expect(crossed).toMatchObject({ code: 'resource_not_found' });
  });

  it('signs with any key of the caller’s account named in the body', async () => {
    await h.identity.accounts.createApiKey(accountId, { name: 'second' });
    const { token } = await tokens().create(accountId, { api_key_name: 'second' });
    expect(decodeParts(token).header.kid).toBe(kid(accountId, 'second'));
    const principal = await h.identity.authenticator.authenticate(`Bearer ${token}`);
    expect(principal.apiKeyName).toBe('second');
  });
});

/**
 * The inspect tests write a token's counters directly to check how they are shown; they put
 * them back so the ledger invariant check at the end of the file sees no holds missing.
 */
const resetCounters = (token: string) =>
  h.prisma.scopedToken.update({
    where: { digest: sha256Hex(token) },
    data: { spentMicroDzd: 0n, reservedMicroDzd: 0n },
  });

describe('inspect', () => {
  it('shows the spec fields plus spent, remaining and revoked', async () => {
    const { token } = await tokens().create(accountId, {
      api_key_name: 'auto',
      models: ['org/model-a'],
      expires_delta: 600,
      spending_limit: 10,
    });
    await h.prisma.scopedToken.update({
      where: { digest: sha256Hex(token) },
      data: { spentMicroDzd: 2_500_000n, reservedMicroDzd: 500_000n },
    });
    expect(await tokens().inspect(accountId, token)).toEqual({
      expires_at: h.clock.s + 600,
      models: ['org/model-a'],
      spending_limit: 10,
      spent_dzd: 2.5,
      remaining_dzd: 7,
      revoked: false,
      expired: false,
      api_key_name: 'auto',
    });
    await resetCounters(token);
    const unlimited = await tokens().create(accountId, { api_key_name: 'auto' });
    expect(await tokens().inspect(accountId, unlimited.token)).toMatchObject({
      models: null,
      spending_limit: null,
      spent_dzd: 0,
      remaining_dzd: null,
    });
  });

  it('never shows a negative remaining amount', async () => {
    const { token } = await tokens().create(accountId, { api_key_name: 'auto', spending_limit: 1 });
    await h.prisma.scopedToken.update({
      where: { digest: sha256Hex(token) },
      data: { spentMicroDzd: 900_000n, reservedMicroDzd: 200_000n },
    });
    expect(await tokens().inspect(accountId, token)).toMatchObject({
      spent_dzd: 0.9,
      remaining_dzd: 0,
    });
    await resetCounters(token);
  });

  it('shows an unregistered client-minted token from its claims, without registering it', async () => {
    const token =
      'jwt:' +
      jwt.sign(
        {
          sub: `service:${accountId}`,
          model: 'org/x',
          exp: h.clock.s + 100,
          spending_limit: 3,
        },
        rawKey,
        { algorithm: 'HS256', keyid: kid(accountId, 'auto'), noTimestamp: true },
      );
    expect(await tokens().inspect(accountId, token)).toEqual({
      expires_at: h.clock.s + 100,
      models: ['org/x'],
      spending_limit: 3,
      spent_dzd: 0,
      remaining_dzd: 3,
      revoked: false,
      expired: false,
      api_key_name: 'auto',
    });
    expect(await h.prisma.scopedToken.count({ where: { digest: sha256Hex(token) } })).toBe(0);
  });

  it('shows expired tokens as expired', async () => {
    const { token } = await tokens().create(accountId, { api_key_name: 'auto', expires_delta: 5 });
    const start = h.clock.ms;
    h.clock.advance(10_000);
    try {
      expect(await tokens().inspect(accountId, token)).toMatchObject({ expired: true });
    } finally {
      h.clock.set(start);
    }
  });

  it('hides tokens of other accounts and tokens that do not verify; 400 for a non-token', async () => {
    const { token } = await tokens().create(accountId, { api_key_name: 'auto' });
    const other = await h.identity.accounts.create({ name: 'Nosy' });
    expect(await gatewayErrorOf(tokens().inspect(other.id, token))).toMatchObject({
      code: 'resource_not_found',
      param: 'jwt',
    });
    const forged =
      'jwt:' +
      jwt.sign({ sub: `service:${accountId}`, exp: h.clock.s + 100 }, 'not-the-key', {
        algorithm: 'HS256',
        keyid: kid(accountId, 'auto'),
      });
    expect(await gatewayErrorOf(tokens().inspect(accountId, forged))).toMatchObject({
      code: 'resource_not_found',
    });
    expect(await gatewayErrorOf(tokens().inspect(accountId, 'sk_live_x'))).toMatchObject({
      code: 'invalid_request_body',
      param: 'jwt',
    });
  });
});

describe('revoke', () => {
  it('revokes by digest, only by the signer’s account, idempotently', async () => {
    const { token } = await tokens().create(accountId, { api_key_name: 'auto' });
    const other = await h.identity.accounts.create({ name: 'Intruder' });
    expect(await gatewayErrorOf(tokens().revoke(token, { accountId: other.id }))).toMatchObject({
      code: 'resource_not_found',
    });
    expect((await tokens().inspect(accountId, token)).revoked).toBe(false);

    expect(await tokens().revoke(token, { accountId })).toMatchObject({ revoked: true });
    const row = await h.prisma.scopedToken.findUniqueOrThrow({
      where: { digest: sha256Hex(token) },
    });
    expect(row.revokedAt).toEqual(h.clock.now());
    h.clock.advance(1_000);
    await tokens().revoke(token, { accountId });
    const again = await h.prisma.scopedToken.findUniqueOrThrow({
      where: { digest: sha256Hex(token) },
    });
    expect(again.revokedAt).toEqual(row.revokedAt);
  });

  it('lets the operator revoke any token, and revokes client-minted tokens never used', async () => {
    const { token } = await tokens().create(accountId, { api_key_name: 'auto' });
    expect(await tokens().revoke(token)).toMatchObject({ revoked: true });

    const minted =
      'jwt:' +
      jwt.sign({ sub: `service:${accountId}`, models: ['a', 'b'], exp: h.clock.s + 100 }, rawKey, {
        algorithm: 'HS256',
        keyid: kid(accountId, 'auto'),
      });
    expect(await tokens().revoke(minted, { accountId })).toMatchObject({
      revoked: true,
      models: ['a', 'b'],
    });
    const row = await h.prisma.scopedToken.findUniqueOrThrow({
      where: { digest: sha256Hex(minted) },
    });
    expect(row).toMatchObject({ origin: 'client', accountId, models: ['a', 'b'] });
    expect(row.revokedAt).not.toBeNull();
  });
});
