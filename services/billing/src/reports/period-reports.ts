/**
 * Finance's period report (the month-end close): the query checked, the rows read in one
 * snapshot, the report assembled with its identities checked, as JSON or one CSV table.
 */
import type { PeriodReport, ReportCsvSection } from '@gateway/contracts';
import { periodQueryOf } from './period-query.js';
import { periodReport } from './period-report.js';
import { reportCsv } from './report-csv.js';
import type { ReportRepository } from './report-repository.js';

export class PeriodReports {
  constructor(
    private readonly store: ReportRepository,
    /** REPORT_TIME_ZONE: the business's zone, where a day of the books begins and ends. */
    private readonly defaultTimeZone: string,
  ) {}

  async report(query: Record<string, unknown>): Promise<PeriodReport> {
    const period = periodQueryOf(query, this.defaultTimeZone);
    return periodReport(period, await this.store.periodRows(period));
  }

  async csv(query: Record<string, unknown>, section: ReportCsvSection): Promise<string> {
    return reportCsv(await this.report(query), section);
  }
}
