import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { encodeLogCursor, parseLogQuery, parseUsageDate, parseUsageQuery } from './query.js';

const NOW = new Date('2026-11-24T03:00:00.000Z');

describe('usage dates', () => {
  it.each([
    ['2026-11-01', '2026-11-01T00:00:00.000Z'],
    ['2026-11-01T10:00:00Z', '2026-11-01T10:00:00.000Z'],
    ['2026-11-01t10:00:00z', '2026-11-01T10:00:00.000Z'],
    ['2026-11-01T10:00:00.123456789Z', '2026-11-01T10:00:00.123Z'],
    ['2026-11-01T10:00:00+01:00', '2026-11-01T09:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(parseUsageDate(text, 'from').toISOString()).toBe(iso);
  });

  it.each([
    'yesterday',
    '2026-02-29',
    '2026-13-01',
    '2026-11-01T10:00:00',
    '2026-11-01 10:00:00Z',
    '2026-11-01T24:00:00Z',
    '2026-11-01T10:61:00Z',
    '2026-11-01T10:00:00+25:00',
    '1730455200000',
    '',
  ])('refuses %j', (text) => {
    expect(() => parseUsageDate(text, 'to')).toThrow(
      expect.objectContaining({ code: 'invalid_request_body', param: 'to' }),
    );
  });
});

describe('usage queries', () => {
  it('defaults: the last 30 days, grouped by day, no account filter for customers', () => {
    expect(parseUsageQuery({ account: 'usr_other' }, NOW, false)).toEqual({
      from: new Date('2026-10-25T03:00:00.000Z'),
      to: NOW,
      groupBy: 'day',
    });
  });

  it('operators may name an account', () => {
    const query = parseUsageQuery({ account: 'usr_1', group_by: 'key' }, NOW, true);
    expect(query).toMatchObject({ accountId: 'usr_1', groupBy: 'key' });
  });

  it('366 days is the longest range', () => {
    expect(() =>
      parseUsageQuery({ from: '2025-11-23', to: '2026-11-24' }, NOW, false),
    ).not.toThrow();
    expect(() => parseUsageQuery({ from: '2025-11-22', to: '2026-11-24' }, NOW, false)).toThrow(
      expect.objectContaining({ param: 'to' }),
    );
  });

  it('a cursor round-trips; a forged one is refused', () => {
    const cursor = encodeLogCursor({ endedAt: NOW, holdId: 'job_a.b:c' });
    expect(parseLogQuery({ cursor }, NOW, false).after).toEqual({
      endedAt: NOW,
      holdId: 'job_a.b:c',
    });
    const forged = Buffer.from(`${NOW.getTime()}.x' OR 1=1`).toString('base64url');
    const error = (() => {
      try {
        return parseLogQuery({ cursor: forged }, NOW, false);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ param: 'cursor' });
  });
});
