import express, { type Router } from 'express';
import { DASHBOARD_OWNER_ROUTES as R } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { checkWebhookUrl } from '../routes/webhook-url.js';
import { ownerAccountId } from './owner-routes.js';

/*
 * Account alerts in the dashboard (`DASHBOARD_OWNER_ROUTES`: `/dashboard/api/alerts`), the
 * session's account only, through the same billing client method and contract as the operator
 * API (`/admin/v1/accounts/{id}/alerts`). GET is 404 `resource_not_found` until alerts are set.
 */

/** Owners (after `ownerOnly`). */
export function ownerAlertRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  serveRoute(router, R.alerts, ({ res }) => operator.getAlerts(ownerAccountId(res)));
  serveRoute(
    router,
    R.putAlerts,
    ({ res, body }) => {
      checkWebhookUrl(body.url, deps.limits.webhookAllowInsecure, 'url');
      return operator.putAlerts(ownerAccountId(res), body);
    },
    jsonBody(deps.limits.jsonBodyBytes),
  );
  serveRoute(router, R.removeAlerts, ({ res }) => operator.removeAlerts(ownerAccountId(res)));
  return router;
}
