import { describe, expect, it } from '@jest/globals';
import { GatewayError, type PeriodReport } from '@gateway/contracts';
import { ClosedPeriods, PERIOD_CLOSE_GRACE_MS, nextMonth } from './closed-periods.js';
import type { ClosedPeriodRow, PeriodRepository } from './period-repository.js';
import type { PeriodReports } from './period-reports.js';

/* The close's rules without a database: the grace after the end, one zone, months in order. */

const ZONE_OFFSET_MS = 3_600_000; // Africa/Algiers, UTC+1

function reportsStub(): PeriodReports {
  return {
    defaultTimeZone: 'Africa/Algiers',
    reportWithDigest: async (query: Record<string, unknown>) => {
      const zone = (query.time_zone as string | undefined) ?? 'Africa/Algiers';
      const offset = zone === 'UTC' ? 0 : ZONE_OFFSET_MS;
      const [year, month] = String(query.from).split('-').map(Number) as [number, number];
      const startsAt = new Date(Date.UTC(year, month - 1, 1) - offset);
      const endsAt = new Date(Date.UTC(year, month, 1) - offset);
      const report = {
        period: {
          time_zone: zone,
          starts_at: startsAt.toISOString(),
          ends_at: endsAt.toISOString(),
        },
        customer_liability: { total: {}, accounts: [], next_cursor: null },
      } as unknown as PeriodReport;
      return { report, digest: { count: '0', digest: '0'.repeat(64) } };
    },
  } as unknown as PeriodReports;
}

function storeStub(): PeriodRepository & { rows: ClosedPeriodRow[] } {
  const rows: ClosedPeriodRow[] = [];
  return {
    rows,
    list: async () => [...rows].sort((a, b) => a.period.localeCompare(b.period)),
    insert: async (row: ClosedPeriodRow) => {
      if (rows.some((r) => r.period === row.period)) return false;
      rows.push(row);
      return true;
    },
  } as unknown as PeriodRepository & { rows: ClosedPeriodRow[] };
}

const at = (iso: string) => () => new Date(iso);

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return (error as GatewayError).message;
}

describe('closing a month', () => {
  it('waits the grace after the month’s end for entries still being written', async () => {
    // September ends at 2026-09-30T23:00Z in Algiers.
    const early = new ClosedPeriods(reportsStub(), storeStub(), at('2026-09-30T23:02:00Z'));
    expect(await refusal(early.close('2026-09', {}))).toContain('can be closed from');
    const graceEnd = new Date(Date.parse('2026-09-30T23:00:00Z') + PERIOD_CLOSE_GRACE_MS);
    const onTime = new ClosedPeriods(reportsStub(), storeStub(), () => graceEnd);
    await expect(onTime.close('2026-09', {})).resolves.toMatchObject({ period: '2026-09' });
  });

  it('keeps closed months in order and in one zone: no gap, no overlap, no reopening', async () => {
    const store = storeStub();
    const periods = new ClosedPeriods(reportsStub(), store, at('2027-06-01T00:00:00Z'));
    await periods.close('2026-09', { time_zone: 'UTC' });
    expect(await refusal(periods.close('2026-11', {}))).toBe('close 2026-10 before 2026-11');
    expect(await refusal(periods.close('2026-09', {}))).toBe('2026-09 is closed already');
    expect(await refusal(periods.close('2026-08', {}))).toBe('2026-08 is closed already');
    expect(await refusal(periods.close('2026-10', { time_zone: 'Africa/Algiers' }))).toContain(
      'closed months are in UTC',
    );
    // Without a zone, the next month closes in the history's.
    await expect(periods.close('2026-10', {})).resolves.toMatchObject({ time_zone: 'UTC' });
  });

  it('names the business zone with the list, so the dashboard picks the month finance closes', async () => {
    const periods = new ClosedPeriods(reportsStub(), storeStub(), at('2027-06-01T00:00:00Z'));
    await expect(periods.list()).resolves.toEqual({
      object: 'list',
      time_zone: 'Africa/Algiers',
      data: [],
    });
  });

  it('knows the month after December', () => {
    expect(nextMonth('2026-12')).toBe('2027-01');
    expect(nextMonth('2026-09')).toBe('2026-10');
  });
});

describe('checking closed months', () => {
  it('recomputes every closed month, or only the last ones when asked (the minute gauge)', async () => {
    const store = storeStub();
    const periods = new ClosedPeriods(reportsStub(), store, at('2027-06-01T00:00:00Z'));
    for (const month of ['2026-09', '2026-10', '2026-11']) await periods.close(month, {});
    const checked: string[] = [];
    Object.assign(store, {
      entriesDigest: async (startsAt: Date) => {
        checked.push(startsAt.toISOString().slice(0, 7));
        return { count: '1', digest: 'f'.repeat(64) };
      },
    });
    const all = await periods.violations();
    expect(checked).toHaveLength(3);
    expect(all).toHaveLength(3); // every digest now differs from the stub's zeros
    checked.length = 0;
    expect(await periods.violations({ latestPeriods: 1 })).toEqual([
      expect.stringMatching(/^closed period 2026-11: its entries changed/),
    ]);
    expect(checked).toHaveLength(1);
  });
});
