/**
 * Account alert settings over HTTP, mounted with the operator API
 * (`/internal/v1/admin`, edge's credential only; routes: `OPERATOR_ROUTES`). Edge exposes them
 * as `/admin/v1/accounts/{id}/alerts` and, for the account's owner, `/dashboard/api/alerts`.
 */
import express, { type Router } from 'express';
import { OPERATOR_ROUTES as R } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { BillingServices } from './internal-routes.js';

export function adminAlertRoutes({ identity, alerts }: BillingServices): Router {
  const router = express.Router();
  // An unknown account is 404 naming the account, not "no settings".
  serveRoute(router, R.getAlerts, async ({ params }) => {
    await identity.accounts.get(params.id);
    return alerts.get(params.id);
  });
  serveRoute(router, R.putAlerts, async ({ params, body }) => {
    await identity.accounts.get(params.id);
    return alerts.put(params.id, body);
  });
  serveRoute(router, R.removeAlerts, async ({ params }) => {
    await identity.accounts.get(params.id);
    await alerts.remove(params.id);
  });
  return router;
}
