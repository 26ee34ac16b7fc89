import express, { type Router } from 'express';
import type { BudgetOwnerRef } from '@gateway/billing-client';
import { DASHBOARD_BUDGET_ROUTES, DASHBOARD_RATE_LIMIT_ROUTES } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { ownerAccountId } from './owner-routes.js';

/*
 * Budgets and per-key rate limits in the dashboard (DASHBOARD_BUDGET_ROUTES,
 * DASHBOARD_RATE_LIMIT_ROUTES), through the same billing client methods as the operator API
 * (`/admin/v1/accounts/{id}/…`), so the same contract validates both. Mounted at the dashboard
 * API's root after its guards: `ownerOnly` on the owners' paths, `operatorsOnly` on
 * `/operator` (finance reads only). An owner's account is the session's, so another account's
 * key is an unknown key (404); a token's setting is read by its owner and set by operators (a
 * token's holder gets its own cap from the token's claims).
 */

/*
 * The two are written out rather than built by one generic function: TypeScript cannot keep a
 * route's path parameters and body typed through a table chosen by a type parameter, and a cast
 * would hide a wrong shape.
 */

export function budgetSettingRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const json = jsonBody(deps.limits.jsonBodyBytes);
  const { operator } = deps.billing;
  const R = DASHBOARD_BUDGET_ROUTES;
  serveRoute(router, R.listOwn, ({ res }) => operator.listBudgets(ownerAccountId(res)));
  serveRoute(
    router,
    R.putOwnKey,
    ({ res, params, body }) => operator.putBudget(ownerAccountId(res), key(params), body),
    json,
  );
  serveRoute(router, R.removeOwnKey, ({ res, params }) =>
    operator.removeBudget(ownerAccountId(res), key(params)),
  );
  serveRoute(router, R.listOfAccount, ({ params }) => operator.listBudgets(params.id));
  serveRoute(
    router,
    R.putAccountKey,
    ({ params, body }) => operator.putBudget(params.id, key(params), body),
    json,
  );
  serveRoute(router, R.removeAccountKey, ({ params }) =>
    operator.removeBudget(params.id, key(params)),
  );
  serveRoute(
    router,
    R.putAccountToken,
    ({ params, body }) => operator.putBudget(params.id, token(params), body),
    json,
  );
  serveRoute(router, R.removeAccountToken, ({ params }) =>
    operator.removeBudget(params.id, token(params)),
  );
  return router;
}

export function rateLimitSettingRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const json = jsonBody(deps.limits.jsonBodyBytes);
  const { operator } = deps.billing;
  const R = DASHBOARD_RATE_LIMIT_ROUTES;
  serveRoute(router, R.listOwn, ({ res }) => operator.listKeyRateLimits(ownerAccountId(res)));
  serveRoute(
    router,
    R.putOwnKey,
    ({ res, params, body }) => operator.putKeyRateLimit(ownerAccountId(res), key(params), body),
    json,
  );
  serveRoute(router, R.removeOwnKey, ({ res, params }) =>
    operator.removeKeyRateLimit(ownerAccountId(res), key(params)),
  );
  serveRoute(router, R.listOfAccount, ({ params }) => operator.listKeyRateLimits(params.id));
  serveRoute(
    router,
    R.putAccountKey,
    ({ params, body }) => operator.putKeyRateLimit(params.id, key(params), body),
    json,
  );
  serveRoute(router, R.removeAccountKey, ({ params }) =>
    operator.removeKeyRateLimit(params.id, key(params)),
  );
  serveRoute(
    router,
    R.putAccountToken,
    ({ params, body }) => operator.putKeyRateLimit(params.id, token(params), body),
    json,
  );
  serveRoute(router, R.removeAccountToken, ({ params }) =>
    operator.removeKeyRateLimit(params.id, token(params)),
  );
  return router;
}

const key = ({ name }: { name: string }): BudgetOwnerRef => ({ apiKey: name });
const token = ({ tokenId }: { tokenId: string }): BudgetOwnerRef => ({ scopedTokenId: tokenId });
