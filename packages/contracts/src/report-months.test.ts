import { describe, expect, it } from '@jest/globals';
import { monthIn, previousMonthIn } from './report-months.js';

/* A month of the books begins at midnight in the business's zone, whatever UTC says. */

describe('report months', () => {
  it('takes the month where the zone is, not where UTC is', () => {
    // 23:30 UTC on 30 November is 00:30 on 1 December in Algiers (UTC+1).
    const now = new Date('2026-11-30T23:30:00Z');
    expect(monthIn('Africa/Algiers', now)).toBe('2026-12');
    expect(previousMonthIn('Africa/Algiers', now)).toBe('2026-11');
    expect(previousMonthIn('UTC', now)).toBe('2026-10');
    // 02:00 UTC on 1 December is still 30 November in New York.
    expect(previousMonthIn('America/New_York', new Date('2026-12-01T02:00:00Z'))).toBe('2026-10');
  });

  it('steps back over a year', () => {
    expect(previousMonthIn('Africa/Algiers', new Date('2027-01-15T12:00:00Z'))).toBe('2026-12');
    expect(previousMonthIn('UTC', new Date('2027-01-01T00:00:00Z'))).toBe('2026-12');
  });
});
