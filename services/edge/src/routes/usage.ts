import express, { type Request, type Router } from 'express';
import { PUBLIC_ROUTES } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { callerOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';

/** What `GET /v1/usage` passes on; billing validates it (400 `invalid_request_body` + param). */
const USAGE_PARAMS = Object.keys(PUBLIC_ROUTES.usage.query.properties);

/**
 * `GET /v1/usage?from=&to=&group_by=day|model|key`: the caller's account's usage, grouped, from
 * billing's usage records. An API key only: a scoped token is handed to third parties, and the
 * account's spending is the key holder's business (401 `invalid_api_key`, as for token
 * management).
 */
export function usageRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const route = PUBLIC_ROUTES.usage;
  mountPublicRoute(router, route, [], async (req, res) => {
    res.json(await deps.billing.usage(callerOf(res).accountId, queryOf(req, USAGE_PARAMS)));
  });
  refuseOtherMethods(router, route.path);
  return router;
}

/** The named parameters as the client wrote them (repeats kept: billing refuses them). */
function queryOf(req: Request, names: readonly string[]): URLSearchParams {
  const raw = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  const query = new URLSearchParams();
  for (const [name, value] of raw) if (names.includes(name)) query.append(name, value);
  return query;
}
