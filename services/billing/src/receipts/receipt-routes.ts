/**
 * Receipts over billing's internal API: edge's `GET /v1/requests/{request_id}` (the caller's
 * account, from the path edge builds) and the operator API's
 * `GET /admin/v1/accounts/{id}/requests/{request_id}`.
 */
import express, { type Router } from 'express';
import { BILLING_ROUTES, OPERATOR_ROUTES } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import { serveBillingRoute } from '../http/billing-route.js';
import type { Identity } from '../identity/index.js';
import type { Receipts } from './receipts.js';

/** Mounted under `/internal/v1`: edge's calls for one account (`BILLING_ROUTES.receipt`). */
export function accountReceiptRoutes(receipts: Receipts): Router {
  const router = express.Router();
  serveBillingRoute(router, BILLING_ROUTES.receipt, ({ params }) =>
    receipts.get(params.accountId, params.requestId),
  );
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
