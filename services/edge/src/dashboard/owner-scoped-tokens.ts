import express, { type Router } from 'express';
import { DASHBOARD_OWNER_ROUTES as R, validateScopedTokenCreate } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { ownerAccountId } from './owner-routes.js';
import { PAGE_PARAMS, pickQuery } from './query.js';

/**
 * An owner's scoped tokens (`DASHBOARD_OWNER_ROUTES`, after `ownerOnly`): the account's
 * registered tokens, creation with `POST /v1/scoped-jwt`'s options (the token answered once,
 * never stored), and revocation by id, which billing scopes to the session's account.
 */
export function scopedTokenRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  serveRoute(router, R.scopedTokens, ({ req, res }) => {
    const page = new URLSearchParams(pickQuery(req.query, PAGE_PARAMS));
    return deps.billing.dashboard.listScopedTokens(ownerAccountId(res), page);
  });
  serveRoute(
    router,
    R.createScopedToken,
    ({ res, body }) => {
      // The schema is the route's; the expiry's bounds depend on the time of the request.
      validateScopedTokenCreate(body, { nowS: Math.floor(Date.now() / 1000) });
      return deps.billing.createScopedToken(ownerAccountId(res), body);
    },
    jsonBody(deps.limits.jsonBodyBytes),
  );
  serveRoute(router, R.revokeScopedToken, ({ res, params }) =>
    deps.billing.dashboard.revokeScopedToken(ownerAccountId(res), params.id),
  );
  return router;
}
