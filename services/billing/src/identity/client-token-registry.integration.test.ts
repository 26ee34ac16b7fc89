import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import {
  fundedAccount,
  gatewayErrorOf,
  setUpIdentity,
  type IdentityHarness,
} from './fixtures.suite.js';
import type { CredentialAdmitRequest } from '../admission/admission.js';
import { sha256Hex } from './secrets.js';

/*
 * The scoped-token registry writes nothing for refused requests: a client-minted token is
 * registered by the admission that places its first hold (or by revocation), and expired rows
 * no hold names are purged after a grace period.
 */

let h: IdentityHarness;
const MODEL = 'org/registry-chat';
const DAY_MS = 86_400_000;

interface Tenant {
  accountId: string;
  key: string;
}

const tenant = (options: { creditDzd?: bigint; rateLimit?: number } = {}) =>
  fundedAccount(h, options);

/** Minted the way a client would, with `jsonwebtoken` and the raw API key. */
function mint(t: Tenant, extra: Record<string, unknown> = {}): string {
  const kid = `service:${t.accountId}:${Buffer.from('auto').toString('base64')}`;
  const payload = { sub: `service:${t.accountId}`, model: '*', exp: h.clock.s + 3600, ...extra };
  return 'jwt:' + jwt.sign(payload, t.key, { algorithm: 'HS256', keyid: kid, noTimestamp: true });
}

const auth = (token: string) => h.identity.authenticator.authenticate(`Bearer ${token}`);
const rowOf = (token: string) =>
  h.prisma.scopedToken.findUnique({ where: { digest: sha256Hex(token) } });
const request = (extra: Partial<CredentialAdmitRequest> = {}): CredentialAdmitRequest => ({
  model: MODEL,
  estimate: { inputTokens: 100, maxOutputTokens: 100 },
  priority: false,
  ...extra,
});
/** Production's admission (one SQL statement), `identity` being one billing replica. */
const admit = (token: string, extra: Partial<CredentialAdmitRequest> = {}, identity = h.identity) =>
  identity.admission.admit(`Bearer ${token}`, request(extra)).then((r) => r.admission);

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T00:00:05Z' });
  await h.identity.catalog.put(MODEL, {
    kind: 'chat',
    provider: 'node',
    upstream_model: 'chat',
    input_price_dzd_per_m: 1_000,
    output_price_dzd_per_m: 1_000,
    max_output_tokens: 1_000,
  });
});

afterAll(async () => {
  await h?.close();
});

describe('client-minted tokens are registered with their first hold', () => {
  it('registers at admission, with the claims, and the hold names the row', async () => {
    const t = await tenant();
    const token = mint(t, { models: [MODEL], spending_limit: 2 });
    await auth(token);
    expect(await rowOf(token)).toBeNull();
    const admission = await admit(token);
    const row = await rowOf(token);
    expect(row).toMatchObject({
      origin: 'client',
      accountId: t.accountId,
      models: [MODEL],
      spendingLimitMicroDzd: 2_000_000n,
      reservedMicroDzd: admission.hold.amountMicroDzd,
    });
    const hold = await h.prisma.hold.findUniqueOrThrow({ where: { id: admission.hold.id } });
    expect(hold.scopedTokenId).toBe(row!.id);
    // Later uses carry the registry id.
    expect((await auth(token)).token?.id).toBe(row!.id);
  });

  it('writes nothing for a request refused at 429, 404, 403 or 402', async () => {
    const limited = await tenant({ rateLimit: 1 });
    await admit(mint(limited, { jti: 'first' }));
    const overLimit = mint(limited);
    expect(await gatewayErrorOf(admit(overLimit))).toMatchObject({
      code: 'rate_limit_exceeded',
    });
    expect(await rowOf(overLimit)).toBeNull();

    const t = await tenant({ creditDzd: 0n });
    const cases: [string, Record<string, unknown>, Partial<CredentialAdmitRequest>][] = [
      ['model_not_found', {}, { model: 'org/nowhere' }],
      ['model_not_allowed', { models: ['org/other'] }, {}],
      ['invalid_request_body', {}, { nodeUnsupportedParameter: 'best_of' }],
      ['insufficient_balance', {}, {}],
      ['budget_exhausted', { spending_limit: 0.000001 }, {}],
    ];
    for (const [code, claims, extra] of cases) {
      const token = mint(t, claims);
      expect(await gatewayErrorOf(admit(token, extra))).toMatchObject({
        code,
      });
      expect(await rowOf(token)).toBeNull();
    }
  });

  it('registers concurrent first admissions of one token once', async () => {
    const t = await tenant();
    const token = mint(t);
    const admissions = await Promise.all(
      Array.from({ length: 6 }, () => admit(token, {}, h.newIdentity().identity)),
    );
    expect(admissions).toHaveLength(6);
    expect(await h.prisma.scopedToken.count({ where: { digest: sha256Hex(token) } })).toBe(1);
    const row = await rowOf(token);
    const holds = await h.prisma.hold.findMany({ where: { scopedTokenId: row!.id } });
    expect(holds).toHaveLength(6);
  });

  it('keeps revocation of a never-used token working, and refuses it at admission', async () => {
    const t = await tenant();
    const neverUsed = mint(t, { jti: 'never-used' });
    await h.identity.scopedTokens.revoke(neverUsed, { accountId: t.accountId });
    expect(await gatewayErrorOf(auth(neverUsed))).toMatchObject({ code: 'token_revoked' });

    const racing = mint(t, { jti: 'racing' });
    await auth(racing);
    await h.identity.scopedTokens.revoke(racing, { accountId: t.accountId });
    expect(await gatewayErrorOf(admit(racing))).toMatchObject({
      code: 'token_revoked',
    });
    expect(await h.prisma.hold.count({ where: { accountId: t.accountId } })).toBe(0);
  });
});

describe('purge of expired registry rows', () => {
  it('deletes rows past expiry plus the grace period, except those a hold names', async () => {
    const t = await tenant();
    const exp = h.clock.s + 60;
    const { token: unused } = await h.identity.scopedTokens.create(t.accountId, {
      api_key_name: 'auto',
      expires_at: exp,
    });
    const used = mint(t, { exp, jti: 'used' });
    await admit(used);
    const revokedUnused = mint(t, { exp, jti: 'revoked' });
    await h.identity.scopedTokens.revoke(revokedUnused, { accountId: t.accountId });
    const live = (await h.identity.scopedTokens.create(t.accountId, { api_key_name: 'auto' }))
      .token;
    const start = h.clock.ms;
    try {
      h.clock.set(exp * 1000 + DAY_MS - 1);
      expect(await h.identity.scopedTokens.purgeExpired(DAY_MS)).toBe(0);
      h.clock.set(exp * 1000 + DAY_MS + 1);
      expect(await h.identity.scopedTokens.purgeExpired(DAY_MS)).toBe(2);
      expect(await rowOf(unused)).toBeNull();
      expect(await rowOf(revokedUnused)).toBeNull();
      expect(await rowOf(used)).not.toBeNull();
      expect(await rowOf(live)).not.toBeNull();
      // A purged token is still refused: expiry is decided before the registry is read.
      expect(await gatewayErrorOf(auth(revokedUnused))).toMatchObject({ code: 'token_expired' });
    } finally {
      h.clock.set(start);
    }
  });
});
