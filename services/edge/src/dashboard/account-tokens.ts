import express, { type Router } from 'express';
import { DASHBOARD_ACCOUNT_ROUTES } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { PAGE_PARAMS, pickQuery } from './query.js';

/**
 * An account's registered scoped tokens on its operator page (after `operatorsOnly`; finance
 * reads too): the ids a token's budget and rate limit are set by. Passed to the operator API.
 */
export function accountTokenRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  serveRoute(router, DASHBOARD_ACCOUNT_ROUTES.scopedTokens, ({ params, req }) => {
    const query = new URLSearchParams(pickQuery(req.query, PAGE_PARAMS));
    return deps.billing.operator.listScopedTokens(params.id, query);
  });
  return router;
}
