import express, { type Router } from 'express';
import { BILLING_ROUTES as R, type IdempotencyClaim } from '@gateway/contracts';
import { jsonBodyParser } from '@gateway/runtime';
import { serveBillingRoute } from './billing-route.js';
import type { RequestIdempotency } from './request-idempotency.js';

/**
 * `/internal/v1/idempotency/*` (`BILLING_ROUTES`' claim, complete and release; edge only): the
 * shared Idempotency-Key store of edge's public POST routes (see request-idempotency.ts). The
 * bodies are the contract's key, with the claim's lease or the answer to store. Stored responses
 * may be large (an embeddings answer), hence the routes' own body limit. Mounted under
 * `/internal/v1` ahead of the internal API's body parser.
 */
export function idempotencyRoutes(store: RequestIdempotency, bodyLimitBytes: number): Router {
  const router = express.Router();
  const body = jsonBodyParser({ limitBytes: bodyLimitBytes });
  serveBillingRoute(
    router,
    R.claimIdempotencyKey,
    ({ body: { leaseMs, holdId, ...ref } }): Promise<IdempotencyClaim> =>
      store.claim(ref, leaseMs, holdId),
    body,
  );
  serveBillingRoute(
    router,
    R.completeIdempotencyKey,
    async ({ body: { response, ...ref } }) => {
      await store.complete(ref, response);
    },
    body,
  );
  serveBillingRoute(
    router,
    R.releaseIdempotencyKey,
    async ({ body: ref }) => {
      await store.release(ref);
    },
    body,
  );
  return router;
}
