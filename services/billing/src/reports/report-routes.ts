/**
 * `GET /internal/v1/admin/ledger/report` (edge's operator API and the dashboard's finance page):
 * JSON, or with `Accept: text/csv` (or `?format=csv`) one CSV table chosen by `?section=`. And
 * closed periods: list, one, close (201; 409 before the month ended or once it is closed).
 */
import express, { type Router } from 'express';
import {
  GatewayError,
  OPERATOR_ROUTES as R,
  PeriodCloseRequestSchema,
  REPORT_CSV_SECTIONS,
  createBodyValidator,
  routeStatus,
  type ClosedPeriod,
  type PeriodCloseRequest,
  type ReportCsvSection,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ClosedPeriods } from './closed-periods.js';
import type { PeriodReports } from './period-reports.js';

const validateClose = createBodyValidator<PeriodCloseRequest>(PeriodCloseRequestSchema);

function sectionOf(value: unknown): ReportCsvSection {
  if (value === undefined) return 'roll_forward';
  if (typeof value === 'string' && (REPORT_CSV_SECTIONS as readonly string[]).includes(value)) {
    return value as ReportCsvSection;
  }
  throw new GatewayError(
    'invalid_request_body',
    `section must be one of ${REPORT_CSV_SECTIONS.join(', ')}`,
    { param: 'section' },
  );
}

export function adminReportRoutes(reports: PeriodReports, periods: ClosedPeriods): Router {
  const router = express.Router();
  serveRoute(router, R.closedPeriods, () => periods.list());
  serveRoute(router, R.closedPeriod, ({ params }) => periods.get(params.period));
  // Its body's fields are all optional: a close with no body at all is a close with none.
  router.post(R.closePeriod.path, async (req, res) => {
    const closed = await periods.close(String(req.params.period), validateClose(req.body ?? {}));
    res.status(routeStatus(R.closePeriod)).json(closed satisfies ClosedPeriod);
  });
  router.get('/ledger/report', async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const wantsCsv =
      query.format === 'csv' || req.accepts(['application/json', 'text/csv']) === 'text/csv';
    if (wantsCsv) {
      const section = sectionOf(query.section);
      const csv = await reports.csv(query, section);
      res
        .type('text/csv')
        .set('Content-Disposition', `attachment; filename="ledger-report-${section}.csv"`)
        .send(csv);
      return;
    }
    res.json(await reports.report(query));
  });
  return router;
}
