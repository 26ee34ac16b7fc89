/**
 * Closing a month of the books: its report as it stands, a digest of its entries and every ledger
 * account's balance at its end (where later reports open from), stored once.
 * A period can be closed once it has ended, and only once. The invariant check recomputes every
 * closed period and names any whose entries or figures would now read differently (the ledger is
 * append-only and entries take the time they are written, so a correction after the close lands
 * in the open period; a difference here means the books were changed behind the ledger's back).
 */
import { isDeepStrictEqual } from 'node:util';
import {
  GatewayError,
  type ClosedPeriod,
  type ClosedPeriodList,
  type PeriodCloseRequest,
  type PeriodReport,
} from '@gateway/contracts';
import type { ClosedPeriodRow, PeriodRepository } from './period-repository.js';
import type { PeriodReports } from './period-reports.js';

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const DEFAULT_CLOSER = 'operator API';
/**
 * How long after a month's end it may be closed. An entry takes billing's clock when billing
 * decides it and is written within its statement timeout (30 s) and retries: one decided at
 * 23:59:59 may be written after midnight, and a close before it would miss it.
 */
export const PERIOD_CLOSE_GRACE_MS = 5 * 60_000;

/** The month after `period` (YYYY-MM). */
export function nextMonth(period: string): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 1)).toISOString().slice(0, 7);
}

/** The month's first and last dates (YYYY-MM-DD), for the report's inclusive range. */
export function monthDates(period: string): { from: string; to: string } {
  const match = MONTH.exec(period);
  if (!match) {
    throw new GatewayError('invalid_request_body', 'period must be a month, YYYY-MM', {
      param: 'period',
    });
  }
  const [year, month] = [Number(match[1]), Number(match[2])];
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { from: `${period}-01`, to: `${period}-${String(lastDay).padStart(2, '0')}` };
}

/** What a closed period keeps: the totals (per-account lines are the live, paged report's). */
function totalsOf(report: PeriodReport): PeriodReport {
  return {
    ...report,
    customer_liability: { ...report.customer_liability, accounts: [], next_cursor: null },
  };
}

/** The figures a recomputation must reproduce (compared as values: jsonb reorders keys). */
const figuresOf = (report: PeriodReport) => [
  report.trial_balance,
  report.customer_liability.total,
  report.revenue,
  report.open_holds,
];

function viewOf(row: ClosedPeriodRow): ClosedPeriod {
  return {
    object: 'ledger_period',
    period: row.period,
    time_zone: row.time_zone,
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    entries_count: Number(row.entries_count),
    entries_digest: row.entries_digest,
    closed_at: row.closed_at.toISOString(),
    closed_by: row.closed_by,
    report: row.report,
  };
}

export class ClosedPeriods {
  constructor(
    private readonly reports: PeriodReports,
    private readonly store: PeriodRepository,
    private readonly clock: () => Date,
  ) {}

  async close(period: string, request: PeriodCloseRequest): Promise<ClosedPeriod> {
    const dates = monthDates(period);
    const timeZone = await this.#zoneInOrder(period, request.time_zone);
    const { report, digest } = await this.reports.reportWithDigest({
      ...dates,
      ...(timeZone === undefined ? {} : { time_zone: timeZone }),
      limit: 1,
    });
    const closedAt = this.clock();
    const settledAtMs = Date.parse(report.period.ends_at) + PERIOD_CLOSE_GRACE_MS;
    if (closedAt.getTime() < settledAtMs) {
      throw new GatewayError(
        'conflict',
        `${period} can be closed from ${new Date(settledAtMs).toISOString()} ` +
          `(its end, ${report.period.ends_at}, and ${PERIOD_CLOSE_GRACE_MS / 60_000} minutes for entries in flight)`,
      );
    }
    const row: ClosedPeriodRow = {
      period,
      time_zone: report.period.time_zone,
      starts_at: new Date(report.period.starts_at),
      ends_at: new Date(report.period.ends_at),
      entries_count: digest.count,
      entries_digest: digest.digest,
      report: totalsOf(report),
      closed_at: closedAt,
      closed_by: request.closed_by ?? DEFAULT_CLOSER,
    };
    if (!(await this.store.insert(row))) {
      throw new GatewayError('conflict', `${period} is closed already`);
    }
    return viewOf(row);
  }

  /**
   * Closed months follow each other in one zone: the first close starts the books' history; each
   * later one is the month after the last, in its zone (no gap, no overlap, no reopening).
   * Returns the zone to close in: the history's, or the one asked for the first close.
   */
  async #zoneInOrder(period: string, timeZone: string | undefined): Promise<string | undefined> {
    const last = (await this.store.list()).at(-1);
    if (!last) return timeZone;
    if (timeZone !== undefined && timeZone !== last.time_zone) {
      throw new GatewayError(
        'conflict',
        `closed months are in ${last.time_zone}; ${period} cannot be closed in ${timeZone}`,
        { param: 'time_zone' },
      );
    }
    if (period <= last.period) throw new GatewayError('conflict', `${period} is closed already`);
    if (period !== nextMonth(last.period)) {
      throw new GatewayError('conflict', `close ${nextMonth(last.period)} before ${period}`);
    }
    return last.time_zone;
  }

  async get(period: string): Promise<ClosedPeriod> {
    monthDates(period);
    const row = await this.store.find(period);
    if (!row) throw new GatewayError('resource_not_found', `${period} is not closed`);
    return viewOf(row);
  }

  async list(): Promise<ClosedPeriodList> {
    const data = (await this.store.list()).map(viewOf);
    return { object: 'list', time_zone: this.reports.defaultTimeZone, data };
  }

  /**
   * Every closed period whose entries, carried-forward balances or figures would now read
   * differently, named. Oldest first: each month's balances are proven from the month before.
   * `latestPeriods`: only the last few (the gauge's minute check; the operator's check and the
   * CLI recompute them all, whose cost grows with the months closed).
   */
  async violations(options: { latestPeriods?: number } = {}): Promise<string[]> {
    const found: string[] = [];
    const rows = await this.store.list();
    const checked = options.latestPeriods === undefined ? rows : rows.slice(-options.latestPeriods);
    for (const row of checked) {
      const entries = await this.store.entriesDigest(row.starts_at, row.ends_at);
      if (entries.digest !== row.entries_digest || entries.count !== row.entries_count) {
        found.push(
          `closed period ${row.period}: its entries changed since the close ` +
            `(${row.entries_count} entries then, ${entries.count} now)`,
        );
        continue;
      }
      const differences = await this.store.balanceDifferences(row);
      if (differences > 0) {
        found.push(
          `closed period ${row.period}: ${differences} carried-forward balances differ from ` +
            'the previous close and its entries',
        );
        continue;
      }
      const now = await this.#report(row.period, row.time_zone);
      if (!isDeepStrictEqual(figuresOf(now), figuresOf(row.report))) {
        found.push(`closed period ${row.period}: recomputed figures differ from the close`);
      }
    }
    return found;
  }

  #report(period: string, timeZone: string | undefined): Promise<PeriodReport> {
    const dates = monthDates(period);
    return this.reports.report({
      ...dates,
      ...(timeZone === undefined ? {} : { time_zone: timeZone }),
      limit: 1,
    });
  }
}
