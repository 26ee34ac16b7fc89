import express, { type RequestHandler, type Router } from 'express';
import {
  DASHBOARD_OWNER_ROUTES as R,
  GatewayError,
  type DashboardApiKeyList,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { sessionOf } from './session-routes.js';

/** Owner routes: the account is the session's, never one named in a path or a body. */
export const ownerOnly: RequestHandler = (_req, res, next) => {
  const session = sessionOf(res);
  if (session.user.role !== 'owner' || session.account === null) {
    throw new GatewayError('forbidden', 'Account owners only');
  }
  next();
};

/** The session's account (after `ownerOnly`, which makes sure there is one). */
export const ownerAccountId = (res: express.Response) => sessionOf(res).account?.id ?? '';

/**
 * The overview and the API keys (`DASHBOARD_OWNER_ROUTES`, after `requireSession` and
 * `ownerOnly`), through the operator API's methods on the session's account.
 */
export function ownerRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  serveRoute(router, R.overview, ({ res }) => deps.billing.dashboard.overview(ownerAccountId(res)));
  serveRoute(router, R.apiKeys, async ({ res }) => {
    const answer = await operator.listApiKeys(ownerAccountId(res));
    return {
      object: 'list',
      data: answer.api_keys.map(({ name, created_at, last_used_at }) => ({
        name,
        created_at,
        last_used_at,
      })),
    } satisfies DashboardApiKeyList;
  });
  serveRoute(
    router,
    R.createApiKey,
    ({ res, body }) => operator.createApiKey(ownerAccountId(res), { name: body.name }),
    jsonBody(deps.limits.jsonBodyBytes),
  );
  serveRoute(router, R.regenerateApiKey, ({ res, params }) =>
    operator.regenerateApiKey(ownerAccountId(res), params.name),
  );
  serveRoute(router, R.deleteApiKey, ({ res, params }) =>
    operator.deleteApiKey(ownerAccountId(res), params.name),
  );
  return router;
}
