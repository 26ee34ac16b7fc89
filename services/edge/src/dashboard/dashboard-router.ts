import express, { type Router } from 'express';
import type { BillingClient } from '@gateway/billing-client';
import { DASHBOARD_OWNER_ROUTES } from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { accountTokenRoutes } from './account-tokens.js';
import { ownerAlertRoutes } from './alert-routes.js';
import { financeRoutes } from './finance-routes.js';
import { operatorConsoleRoutes } from './operator-console.js';
import { operatorRoutes, operatorsOnly } from './operator-routes.js';
import { ownerOnly, ownerRoutes } from './owner-routes.js';
import { scopedTokenRoutes } from './owner-scoped-tokens.js';
import { webhookRoutes } from './owner-webhooks.js';
import { requireSession, sessionOf, sessionRoutes } from './session-routes.js';
import { budgetSettingRoutes, rateLimitSettingRoutes } from './setting-routes.js';
import { DEFAULT_DASHBOARD_SETTINGS } from './settings.js';
import { sendStatement } from './statements.js';
import { operatorUsageRoutes, ownerUsageRoutes } from './usage-routes.js';

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
 * `/dashboard/api` (contract: the route tables of packages/contracts/src/dashboard-routes.ts,
 * dashboard-owner-routes.ts and dashboard-operator-routes.ts; shapes: dashboard-api.ts): sign-in
 * and invitation acceptance, then everything else behind a session (cookie), with the CSRF check
 * on every state change. Answers are never cached by the browser. Each router below mounts its
 * routes on their tables' paths, at this router's root.
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
  // Staff read the books; finance alone closes a period (its own guards, on `/finance`).
  router.use(financeRoutes(deps));
  router.use(OWNER_PATHS, ownerOnly);
  router.use(operatorRoutes(deps, settings));
  router.use(operatorConsoleRoutes(deps));
  router.use(operatorUsageRoutes(deps));
  router.use(ownerRoutes(deps));
  router.use(budgetSettingRoutes(deps));
  router.use(rateLimitSettingRoutes(deps));
  router.use(accountTokenRoutes(deps));
  router.use(scopedTokenRoutes(deps));
  router.use(webhookRoutes(deps));
  router.use(ownerAlertRoutes(deps));
  router.use(ownerUsageRoutes(deps));
  // The statement answers CSV when asked (not `serveRoute`'s): written out on its route's path.
  router.get(DASHBOARD_OWNER_ROUTES.statement.path, ownerOnly, async (req, res) => {
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
