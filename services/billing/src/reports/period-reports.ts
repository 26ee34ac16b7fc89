/**
 * Finance's period report (the month-end close): the query checked, the rows read in one
 * snapshot, the report assembled with its identities checked, as JSON or one CSV table.
 */
import type { PeriodReport, ReportCsvSection } from '@gateway/contracts';
import { periodQueryOf } from './period-query.js';
import { periodReport } from './period-report.js';
import { reportCsv } from './report-csv.js';
import type { EntriesDigest } from './period-repository.js';
import type { ReportRepository } from './report-repository.js';

/** The CSV's "page": every customer account (one row each, streamed into memory once). */
const ALL_ACCOUNTS = 10_000_000;

export class PeriodReports {
  constructor(
    private readonly store: ReportRepository,
    /** REPORT_TIME_ZONE: the business's zone, where a day of the books begins and ends. */
    readonly defaultTimeZone: string,
  ) {}

  async report(query: Record<string, unknown>): Promise<PeriodReport> {
    const period = periodQueryOf(query, this.defaultTimeZone);
    return periodReport(period, await this.store.periodRows(period));
  }

  /** The report and its period's entries digest, read in one snapshot (a close). */
  async reportWithDigest(
    query: Record<string, unknown>,
  ): Promise<{ report: PeriodReport; digest: EntriesDigest }> {
    const period = periodQueryOf(query, this.defaultTimeZone);
    const rows = await this.store.periodRows(period, { digest: true });
    return { report: periodReport(period, rows), digest: rows.digest! };
  }

  /** Every account in the roll-forward (a download is the whole book, never one page). */
  async csv(query: Record<string, unknown>, section: ReportCsvSection): Promise<string> {
    const period = {
      ...periodQueryOf(query, this.defaultTimeZone),
      limit: ALL_ACCOUNTS,
      after: null,
    };
    return reportCsv(periodReport(period, await this.store.periodRows(period)), section);
  }
}
