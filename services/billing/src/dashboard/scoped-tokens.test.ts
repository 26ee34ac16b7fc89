import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { dashboardPageSize, scopedTokenToJson, type ScopedTokenRow } from './scoped-tokens.js';

/** The owner's view of a registry row: state precedence and what is left under the limit. */

const NOW = new Date('2027-03-01T12:00:00Z');
const DZD = 1_000_000n;

const row = (overrides: Partial<ScopedTokenRow> = {}): ScopedTokenRow => ({
  id: 'tok_1',
  digest: 'd'.repeat(64),
  accountId: 'usr_1',
  apiKeyName: 'ci',
  models: [],
  expiresAt: new Date(NOW.getTime() + 60_000),
  spendingLimitMicroDzd: 2n * DZD,
  spentMicroDzd: DZD,
  reservedMicroDzd: 0n,
  revokedAt: null,
  origin: 'client',
  createdAt: new Date(NOW.getTime() - 60_000),
  requestsPerMinute: null,
  tokensPerMinute: null,
  ...overrides,
});

describe('scopedTokenToJson', () => {
  it('shows spend, what is left after pending holds, and never the digest', () => {
    const json = scopedTokenToJson(row({ reservedMicroDzd: DZD / 4n }), NOW);
    expect(json).toMatchObject({
      models: null,
      spending_limit_dzd: 2,
      spent_dzd: 1,
      remaining_dzd: 0.75,
      state: 'valid',
      origin: 'client',
    });
    expect(JSON.stringify(json)).not.toContain('d'.repeat(64));
  });

  it('orders the states: revoked, then expired, then exhausted', () => {
    const past = new Date(NOW.getTime() - 1);
    const spentOut = { spentMicroDzd: 2n * DZD };
    expect(scopedTokenToJson(row(spentOut), NOW).state).toBe('exhausted');
    expect(scopedTokenToJson(row({ reservedMicroDzd: 3n * DZD }), NOW)).toMatchObject({
      state: 'exhausted',
      remaining_dzd: 0,
    });
    expect(scopedTokenToJson(row({ ...spentOut, expiresAt: NOW }), NOW).state).toBe('expired');
    const revoked = row({ ...spentOut, expiresAt: past, revokedAt: past });
    expect(scopedTokenToJson(revoked, NOW).state).toBe('revoked');
    const unlimited = row({ spendingLimitMicroDzd: null, spentMicroDzd: 9n * DZD });
    expect(scopedTokenToJson(unlimited, NOW)).toMatchObject({
      state: 'valid',
      remaining_dzd: null,
      spending_limit_dzd: null,
    });
  });
});

describe('dashboardPageSize', () => {
  it('takes 1 to 100, 20 by default, and refuses anything else', () => {
    expect(dashboardPageSize(undefined)).toBe(20);
    expect(dashboardPageSize('100')).toBe(100);
    for (const bad of ['0', '101', '-1', '1.5', 'x', ['2']]) {
      expect(() => dashboardPageSize(bad)).toThrow(GatewayError);
    }
  });
});
