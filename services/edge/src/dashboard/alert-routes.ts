import express, { type Router } from 'express';
import {
  AlertSettingsPutRequestSchema,
  createBodyValidator,
  type AlertSettingsPutRequest,
  type AlertSettingsView,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { checkWebhookUrl } from '../routes/webhook-url.js';
import { ownerAccountId } from './owner-routes.js';

/*
 * Account alerts in the dashboard: `/dashboard/api/alerts`, the session's
 * account only, through the same billing client method and contract as the operator API
 * (`/admin/v1/accounts/{id}/alerts`). GET is 404 `resource_not_found` until alerts are set.
 */

const validatePut = createBodyValidator<AlertSettingsPutRequest>(AlertSettingsPutRequestSchema);

/** Owners (after `ownerOnly`). */
export function ownerAlertRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  router.get('/', async (_req, res) => {
    const view: AlertSettingsView = await operator.getAlerts(ownerAccountId(res));
    res.json(view);
  });
  router.put('/', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    const body = validatePut(req.body);
    checkWebhookUrl(body.url, deps.limits.webhookAllowInsecure, 'url');
    const view: AlertSettingsView = await operator.putAlerts(ownerAccountId(res), body);
    res.json(view);
  });
  router.delete('/', async (_req, res) => {
    await operator.removeAlerts(ownerAccountId(res));
    res.status(204).end();
  });
  return router;
}
