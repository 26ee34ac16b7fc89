import { describe, expect, it } from '@jest/globals';
import { buildKid, parseKid, readClaims } from './jwt.js';
import { generateApiKey, looksLikeApiKey, newAccountId } from './secrets.js';

describe('API keys and ids', () => {
  it('generates sk_live_ + 43 base64url characters of 32 random bytes', () => {
    const keys = new Set(Array.from({ length: 50 }, generateApiKey));
    expect(keys.size).toBe(50);
    for (const key of keys) {
      expect(key).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(key.slice('sk_live_'.length), 'base64url')).toHaveLength(32);
      expect(looksLikeApiKey(key)).toBe(true);
    }
    expect(looksLikeApiKey('sk_live_short')).toBe(false);
    expect(looksLikeApiKey(`sk_test_${'a'.repeat(43)}`)).toBe(false);
    expect(looksLikeApiKey(`sk_live_${'a'.repeat(42)}=`)).toBe(false);
  });

  it('makes user ids of usr_ + 20 lowercase base32 characters', () => {
    for (let i = 0; i < 20; i++) expect(newAccountId()).toMatch(/^usr_[a-z2-7]{20}$/);
  });
});

describe('kid', () => {
  it('is <prefix>:<user_id>:<base64(name)> and parses back', () => {
    const kid = buildKid('service', 'usr_abc', 'auto');
    expect(kid).toBe(`service:usr_abc:${Buffer.from('auto').toString('base64')}`);
    expect(parseKid(kid, 'service')).toEqual({ accountId: 'usr_abc', keyName: 'auto' });
  });

  it('accepts base64url and unpadded names, refuses anything else', () => {
    // "a.b-c" base64 is "YS5iLWM=": also valid unpadded.
    expect(parseKid('service:usr_abc:YS5iLWM', 'service')?.keyName).toBe('a.b-c');
    // base64url "Pj4-" decodes to ">>>": not a valid key name.
    expect(parseKid('service:usr_abc:Pj4-', 'service')).toBeNull();
    expect(parseKid('other:usr_abc:YXV0bw==', 'service')).toBeNull();
    expect(parseKid('service:usr_abc', 'service')).toBeNull();
    expect(parseKid('service:usr_abc:YXV0bw==:x', 'service')).toBeNull();
    expect(parseKid('service::YXV0bw==', 'service')).toBeNull();
    expect(parseKid('service:usr_abc:', 'service')).toBeNull();
    expect(parseKid('service:usr_abc:YXV0bx==', 'service')).toBeNull(); // non-canonical bits
    expect(parseKid('service:usr_abc:!!!!', 'service')).toBeNull();
    expect(parseKid(42, 'service')).toBeNull();
  });
});

describe('claims', () => {
  const sub = 'service:usr_abc';

  it('reads models from `models`, else `model`; `*` or nothing means any model', () => {
    const read = (payload: Record<string, unknown>) =>
      readClaims({ sub, exp: 10, ...payload }, sub);
    expect(read({ model: 'a/b', models: ['a/b', 'c', 'c'] })).toEqual({
      ok: true,
      claims: { exp: 10, models: ['a/b', 'c'], spendingLimitMicroDzd: null },
    });
    expect(read({ model: 'a/b' })).toMatchObject({ claims: { models: ['a/b'] } });
    expect(read({ model: '*' })).toMatchObject({ claims: { models: null } });
    expect(read({})).toMatchObject({ claims: { models: null } });
    expect(read({ models: ['x', '*'] })).toMatchObject({ claims: { models: null } });
    expect(read({ models: [] })).toMatchObject({ ok: false });
    expect(read({ models: 'a' })).toMatchObject({ ok: false });
    expect(read({ model: 5 })).toMatchObject({ ok: false });
  });

  it('reads spending_limit in DZD, refusing malformed values instead of ignoring them', () => {
    const read = (limit: unknown) => readClaims({ sub, exp: 10, spending_limit: limit }, sub);
    expect(read(12.5)).toMatchObject({ claims: { spendingLimitMicroDzd: 12_500_000n } });
    expect(read(0)).toMatchObject({ claims: { spendingLimitMicroDzd: 0n } });
    expect(read(null)).toMatchObject({ claims: { spendingLimitMicroDzd: null } });
    for (const bad of [-1, '5', 1.0000001, 1e12, Number.NaN, {}]) {
      expect(read(bad)).toMatchObject({ ok: false });
    }
  });

  it('requires the subject of the kid and an integer exp', () => {
    expect(readClaims({ sub: 'service:usr_other', exp: 10 }, sub)).toMatchObject({ ok: false });
    expect(readClaims({ exp: 10 }, sub)).toMatchObject({ ok: false });
    expect(readClaims({ sub }, sub)).toEqual({
      ok: false,
      reason: 'Scoped token has no exp claim',
    });
    expect(readClaims({ sub, exp: 10.5 }, sub)).toMatchObject({ ok: false });
    expect(readClaims({ sub, exp: '10' }, sub)).toMatchObject({ ok: false });
  });
});
