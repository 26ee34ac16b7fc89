/**
 * `GET /internal/v1/admin/ledger/report` (edge's operator API and the dashboard's finance page):
 * JSON, or with `Accept: text/csv` (or `?format=csv`) one CSV table chosen by `?section=`.
 */
import express, { type Router } from 'express';
import { GatewayError, REPORT_CSV_SECTIONS, type ReportCsvSection } from '@gateway/contracts';
import type { PeriodReports } from './period-reports.js';

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

export function adminReportRoutes(reports: PeriodReports): Router {
  const router = express.Router();
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
