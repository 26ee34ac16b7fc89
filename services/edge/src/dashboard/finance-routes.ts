/**
 * `/dashboard/api/finance/*` (after `requireSession`): the month-end close in the dashboard.
 * Operators and finance read the period report and the closed periods; closing a period is the
 * finance role's alone (the books are finance's to close; operators run the platform). Only the
 * report's own parameters travel on to billing.
 */
import express, { type RequestHandler, type Router } from 'express';
import { GatewayError, type ClosedPeriod, type ClosedPeriodList } from '@gateway/contracts';
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
  router.use(staffOnly);
  router.get('/report', async (req, res) => {
    const query = new URLSearchParams(pickQuery(req.query, REPORT_PARAMS));
    if (!wantsCsv(req)) {
      res.json(await operator.ledgerReport(query));
      return;
    }
    const section = typeof req.query.section === 'string' ? req.query.section : 'roll_forward';
    query.set('section', section);
    sendCsv(res, `ledger-report-${section}`, await operator.ledgerReportCsv(query));
  });
  router.get('/periods', async (_req, res) => {
    res.json((await operator.closedPeriods()) satisfies ClosedPeriodList);
  });
  router.post('/periods/:period/close', financeOnly, async (req, res) => {
    const closed = await operator.closePeriod(String(req.params.period), {
      closed_by: sessionOf(res).user.email,
    });
    res.status(201).json(closed satisfies ClosedPeriod);
  });
  return router;
}
