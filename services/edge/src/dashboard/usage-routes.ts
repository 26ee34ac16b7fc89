import express, { type Request, type Response, type Router } from 'express';
import {
  DASHBOARD_OPERATOR_ROUTES as OPERATOR,
  DASHBOARD_OWNER_ROUTES as OWNER,
  type RouteAnswer,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { sendCsv } from './billing-calls.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sessionOf } from './session-routes.js';
import { wantsCsv } from './statements.js';

// Only these travel on to billing, which checks them (400 naming the parameter).
const SUM_PARAMS = ['from', 'to', 'group_by'] as const;
const LOG_PARAMS = ['from', 'to', ...PAGE_PARAMS] as const;

const paramsOf = (req: Request, names: readonly string[]) =>
  new URLSearchParams(pickQuery(req.query, names));

/**
 * An owner's usage (`DASHBOARD_OWNER_ROUTES`): the session's account's usage, as `GET /v1/usage`
 * answers it (`?from&to&group_by=day|model|key|day,model`), its request log (JSON pages, or the
 * whole range as CSV with `?format=csv`) and a request's receipt. The account is the session's.
 * The request log answers CSV when asked, which `serveRoute` does not do: its handler is
 * written out, mounted on its route's path; its JSON answer is the route's.
 */
export function ownerUsageRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const accountOf = (res: Response) => sessionOf(res).account?.id ?? '';
  serveRoute(router, OWNER.usage, ({ req, res }) =>
    deps.billing.usage(accountOf(res), paramsOf(req, SUM_PARAMS)),
  );
  router.get(OWNER.usageRequests.path, async (req, res) => {
    if (wantsCsv(req)) {
      const range = paramsOf(req, ['from', 'to']);
      sendCsv(res, 'requests', await deps.billing.usageRequestsCsv(accountOf(res), range));
      return;
    }
    const page: RouteAnswer<typeof OWNER.usageRequests> = await deps.billing.usageRequests(
      accountOf(res),
      paramsOf(req, LOG_PARAMS),
    );
    res.json(page);
  });
  // A request's receipt: the session's account's, like `GET /v1/requests/{id}`.
  serveRoute(router, OWNER.receipt, ({ res, params }) =>
    deps.billing.receipt(accountOf(res), params.requestId),
  );
  return router;
}

/**
 * Usage across accounts (`DASHBOARD_OPERATOR_ROUTES`, operator and finance): every account's or
 * the one named by `?account=`, and the request log across accounts (CSV as the owner's: its
 * handler written out on its route's path), passed to the operator API.
 */
export function operatorUsageRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  serveRoute(router, OPERATOR.usage, ({ req }) =>
    operator.usage(paramsOf(req, [...SUM_PARAMS, 'account'])),
  );
  router.get(OPERATOR.usageRequests.path, async (req, res) => {
    if (wantsCsv(req)) {
      const range = paramsOf(req, ['from', 'to', 'account']);
      sendCsv(res, 'requests', await operator.usageRequestsCsv(range));
      return;
    }
    const page: RouteAnswer<typeof OPERATOR.usageRequests> = await operator.usageRequests(
      paramsOf(req, [...LOG_PARAMS, 'account']),
    );
    res.json(page);
  });
  return router;
}
