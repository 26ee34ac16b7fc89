import express, { type Router } from 'express';
import { PUBLIC_ROUTES, type Receipt } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { callerOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';

/**
 * `GET /v1/requests/{request_id}`: the receipt of one of the account's requests, by
 * its `X-Request-Id` or its job id (`chatcmpl-…`), built by billing. Any API key of the account
 * may read any of its requests; a scoped token may not (401 `invalid_api_key`, as for
 * `GET /v1/usage`): the account's money is the key holder's business. Another account's id is
 * 404 like an unknown one.
 */
export function receiptsRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const route = PUBLIC_ROUTES.receipt;
  mountPublicRoute(router, route, [], async (req, res) => {
    const { accountId } = callerOf(res);
    const receipt: Receipt = await deps.billing.receipt(accountId, String(req.params.request_id));
    res.json(receipt);
  });
  refuseOtherMethods(router, route.path);
  return router;
}
