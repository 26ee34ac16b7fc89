/**
 * Receipts over billing's internal API: edge's `GET /v1/requests/{request_id}` (the caller's
 * account, from the path edge builds) and the operator API's
 * `GET /admin/v1/accounts/{id}/requests/{request_id}`.
 */
import express, { type Router } from 'express';
import { OPERATOR_ROUTES, type Receipt } from '@gateway/contracts';
import { allowInternalCallers, serveRoute } from '@gateway/runtime';
import type { Identity } from '../identity/index.js';
import type { Receipts } from './receipts.js';

/** Mounted under `/internal/v1`: edge's calls for one account. */
export function accountReceiptRoutes(receipts: Receipts): Router {
  const router = express.Router();
  const EDGE = allowInternalCallers('edge');
  router.get('/accounts/:accountId/requests/:requestId', EDGE, async (req, res) => {
    const receipt = await receipts.get(String(req.params.accountId), String(req.params.requestId));
    res.json(receipt satisfies Receipt);
  });
  return router;
}

/** Mounted under `/internal/v1/admin` (edge's credential only; `OPERATOR_ROUTES.receipt`). */
export function adminReceiptRoutes(receipts: Receipts, identity: Identity): Router {
  const router = express.Router();
  serveRoute(router, OPERATOR_ROUTES.receipt, async ({ params }) => {
    // An unknown account is its own 404 (a typo must not read as "no such request").
    await identity.accounts.get(params.id);
    return receipts.get(params.id, params.requestId, true);
  });
  return router;
}
