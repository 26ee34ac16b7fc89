/**
 * The month-end close in the dashboard (`DASHBOARD_FINANCE_ROUTES`, after `requireSession`).
 * Operators and finance read the period report and the closed periods; closing a period is the
 * finance role's alone (the books are finance's to close; operators run the platform). Only the
 * report's own parameters travel on to billing.
 */
import express, { type RequestHandler, type Router } from 'express';
import { DASHBOARD_FINANCE_ROUTES as R, GatewayError, type RouteAnswer } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { sendCsv } from './billing-calls.js';
import { pickQuery } from './query.js';
import { sessionOf } from './session-routes.js';
import { wantsCsv } from './statements.js';

const REPORT_PARAMS = ['from', 'to', 'time_zone', 'limit', 'cursor'];

/** Operators and finance: the platform's staff. */
const staffOnly: RequestHandler = (_req, res, next) => {
  if (sessionOf(res).user.role === 'owner') throw new GatewayError('forbidden', 'Operators only');
  next();
};

const financeOnly: RequestHandler = (_req, res, next) => {
  if (sessionOf(res).user.role !== 'finance') {
    throw new GatewayError('forbidden', 'Only the finance role closes a period');
  }
  next();
};

export function financeRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  // Every path under /finance, known or not, is the staff's.
  router.use('/finance', staffOnly);
  // The report answers one of its tables as CSV when asked, which `serveRoute` does not do: its
  // handler is written out, mounted on its route's path; its JSON answer is the route's.
  router.get(R.report.path, async (req, res) => {
    const query = new URLSearchParams(pickQuery(req.query, REPORT_PARAMS));
    if (!wantsCsv(req)) {
      const report: RouteAnswer<typeof R.report> = await operator.ledgerReport(query);
      res.json(report);
      return;
    }
    const section = typeof req.query.section === 'string' ? req.query.section : 'roll_forward';
    query.set('section', section);
    sendCsv(res, `ledger-report-${section}`, await operator.ledgerReportCsv(query));
  });
  serveRoute(router, R.periods, () => operator.closedPeriods());
  serveRoute(
    router,
    R.closePeriod,
    ({ res, params }) =>
      operator.closePeriod(params.period, { closed_by: sessionOf(res).user.email }),
    [financeOnly],
  );
  return router;
}
