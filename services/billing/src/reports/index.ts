export { PeriodReports } from './period-reports.js';
export { ReportRepository } from './report-repository.js';
export { adminReportRoutes } from './report-routes.js';
export { ClosedPeriods } from './closed-periods.js';
export { PeriodRepository } from './period-repository.js';
export { checkBooks } from './books-check.js';
export { createReports } from './create-reports.js';
