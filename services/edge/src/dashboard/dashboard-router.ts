import express, { type Router } from 'express';
import type { BillingClient } from '@gateway/billing-client';
import type { ConsoleDeps } from '../deps.js';
import { accountTokenRoutes } from './account-tokens.js';
import { ownerAlertRoutes } from './alert-routes.js';
import { operatorConsoleRoutes } from './operator-console.js';
import { operatorRoutes, operatorsOnly } from './operator-routes.js';
import { ownerOnly, ownerRoutes } from './owner-routes.js';
import { scopedTokenRoutes } from './owner-scoped-tokens.js';
import { budgetSettingRoutes, rateLimitSettingRoutes } from './setting-routes.js';
import { webhookRoutes } from './owner-webhooks.js';
import { sendStatement } from './statements.js';
import { operatorUsageRoutes, ownerUsageRoutes } from './usage-routes.js';
import { sessionOf } from './session-routes.js';
import { financeRoutes } from './finance-routes.js';
import { requireSession, sessionRoutes } from './session-routes.js';
import { DEFAULT_DASHBOARD_SETTINGS } from './settings.js';

/** The owners' sections (`GET /statement` is guarded on its route: other methods stay 404). */
const OWNER_PATHS = [
  '/overview',
  '/api-keys',
  '/scoped-tokens',
  '/webhooks',
  '/usage',
  '/budgets',
  '/alerts',
  '/rate-limits',
];

/**
 * `/dashboard/api` (contract: packages/contracts/src/dashboard-api.ts): sign-in and invitation
 * acceptance, then everything else behind a session (cookie), with the CSRF check on every
 * state change. Answers are never cached by the browser.
 */
export function dashboardRouter(edgeDeps: ConsoleDeps): Router {
  const deps: ConsoleDeps = { ...edgeDeps, billing: dashboardBilling(edgeDeps) };
  const settings = deps.dashboard ?? DEFAULT_DASHBOARD_SETTINGS;
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  router.use(sessionRoutes(deps, settings));
  router.use(requireSession(deps, settings));
  // The role guards, each applied once here: the routers below assume them.
  router.use('/operator', operatorsOnly);
  // Staff read the books; finance alone closes a period (its own guards).
  router.use('/finance', financeRoutes(deps));
  router.use(OWNER_PATHS, ownerOnly);
  router.use('/operator', operatorRoutes(deps, settings));
  router.use('/operator', operatorConsoleRoutes(deps));
  router.use('/operator/usage', operatorUsageRoutes(deps));
  router.use(ownerRoutes(deps));
  // Owners' and operators' paths in one router each (contract: dashboard-routes.ts).
  router.use(budgetSettingRoutes(deps));
  router.use(rateLimitSettingRoutes(deps));
  router.use(accountTokenRoutes(deps));
  router.use('/scoped-tokens', scopedTokenRoutes(deps));
  router.use('/webhooks', webhookRoutes(deps));
  router.use('/alerts', ownerAlertRoutes(deps));
  router.use('/usage', ownerUsageRoutes(deps));
  router.get('/statement', ownerOnly, async (req, res) => {
    await sendStatement(deps, req, res, sessionOf(res).account?.id ?? '');
  });
  return router;
}

/**
 * Every dashboard call to billing goes through the dashboard's own client (a bulkhead: its own
 * connection pool), so no dashboard load delays the public API's calls. A catalog change made
 * from the console still drops the API client's cached model listing at once.
 */
function dashboardBilling(deps: ConsoleDeps): BillingClient {
  const lane = deps.dashboardBilling;
  if (lane === undefined || lane === deps.billing) return deps.billing;
  return {
    ...lane,
    invalidateCatalog: () => {
      lane.invalidateCatalog();
      deps.billing.invalidateCatalog();
    },
  };
}
