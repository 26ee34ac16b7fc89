import express, { type Request, type Response, type Router } from 'express';
import type { Receipt, UsageList, UsageLogPage } from '@gateway/contracts';
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
 * `/dashboard/api/usage` (owners): the session's account's usage, as `GET /v1/usage` answers it
 * (`?from&to&group_by=day|model|key|day,model`), its request log (`/usage/requests`, JSON
 * pages or the whole range as CSV with `?format=csv`) and a request's receipt
 * (`/usage/requests/{id}`). The account is the session's.
 */
export function ownerUsageRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const accountOf = (res: Response) => sessionOf(res).account?.id ?? '';
  router.get('/', async (req, res) => {
    const list: UsageList = await deps.billing.usage(accountOf(res), paramsOf(req, SUM_PARAMS));
    res.json(list);
  });
  router.get('/requests', async (req, res) => {
    if (wantsCsv(req)) {
      const range = paramsOf(req, ['from', 'to']);
      sendCsv(res, 'requests', await deps.billing.usageRequestsCsv(accountOf(res), range));
      return;
    }
    const page: UsageLogPage = await deps.billing.usageRequests(
      accountOf(res),
      paramsOf(req, LOG_PARAMS),
    );
    res.json(page);
  });
  // A request's receipt: the session's account's, like `GET /v1/requests/{id}`.
  router.get('/requests/:requestId', async (req, res) => {
    const receipt: Receipt = await deps.billing.receipt(accountOf(res), req.params.requestId);
    res.json(receipt);
  });
  return router;
}

/**
 * `/dashboard/api/operator/usage` (operator and finance): every account's usage or the one named
 * by `?account=`, and the request log across accounts, passed to the operator API.
 */
export function operatorUsageRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  router.get('/', async (req, res) => {
    const list: UsageList = await operator.usage(paramsOf(req, [...SUM_PARAMS, 'account']));
    res.json(list);
  });
  router.get('/requests', async (req, res) => {
    if (wantsCsv(req)) {
      const range = paramsOf(req, ['from', 'to', 'account']);
      sendCsv(res, 'requests', await operator.usageRequestsCsv(range));
      return;
    }
    const page: UsageLogPage = await operator.usageRequests(
      paramsOf(req, [...LOG_PARAMS, 'account']),
    );
    res.json(page);
  });
  return router;
}
