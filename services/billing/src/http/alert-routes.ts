/**
 * Account alert settings over HTTP, mounted with the operator API
 * (`/internal/v1/admin`, edge's credential only). Edge exposes them as
 * `/admin/v1/accounts/{id}/alerts` and, for the account's owner, `/dashboard/api/alerts`.
 */
import express, { type Router } from 'express';
import {
  AlertSettingsPutRequestSchema,
  createBodyValidator,
  type AlertSettingsPutRequest,
  type AlertSettingsView,
} from '@gateway/contracts';
import type { BillingServices } from './internal-routes.js';

const validatePut = createBodyValidator<AlertSettingsPutRequest>(AlertSettingsPutRequestSchema);

export function adminAlertRoutes({ identity, alerts }: BillingServices): Router {
  const router = express.Router();
  const path = '/accounts/:id/alerts';
  router.get(path, async (req, res) => {
    // An unknown account is 404 naming the account, not "no settings".
    await identity.accounts.get(req.params.id);
    res.json((await alerts.get(req.params.id)) satisfies AlertSettingsView);
  });
  router.put(path, async (req, res) => {
    const body = validatePut(req.body);
    await identity.accounts.get(req.params.id);
    res.json((await alerts.put(req.params.id, body)) satisfies AlertSettingsView);
  });
  router.delete(path, async (req, res) => {
    await identity.accounts.get(req.params.id);
    await alerts.remove(req.params.id);
    res.status(204).end();
  });
  return router;
}
