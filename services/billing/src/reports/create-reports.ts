import { ClosedPeriods } from './closed-periods.js';
import { PeriodReports } from './period-reports.js';
import { PeriodRepository } from './period-repository.js';
import { ReportRepository } from './report-repository.js';

/**
 * Finance's reports and closed periods over billing's pool: what the service, its tests and the
 * ledger-check CLI wire alike. `defaultTimeZone`: REPORT_TIME_ZONE (closed periods keep theirs).
 */
type Pool = ConstructorParameters<typeof ReportRepository>[0];

export function createReports(pool: Pool, defaultTimeZone: string, clock: () => Date) {
  const reports = new PeriodReports(new ReportRepository(pool), defaultTimeZone);
  return { reports, periods: new ClosedPeriods(reports, new PeriodRepository(pool), clock) };
}
