/**
 * Per-key rate limits over HTTP: the operator API's routes (`OPERATOR_ROUTES`, which edge
 * exposes under `/admin/v1`): an API key's and a scoped token's own limits, and the account's
 * list of them.
 */
import express, { type Router } from 'express';
import { OPERATOR_ROUTES as R } from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { BillingServices } from './internal-routes.js';

/** Mounted with the operator API (`/internal/v1/admin`, edge's credential only). */
export function adminKeyLimitRoutes({ identity }: BillingServices): Router {
  const router = express.Router();
  const limits = identity.keyRateLimits;
  serveRoute(router, R.listKeyRateLimits, async ({ params }) => {
    // An unknown account is 404, not an empty list: a typo must not read as "no limits".
    await identity.accounts.get(params.id);
    return limits.list(params.id);
  });
  serveRoute(router, R.getKeyRateLimit, ({ params }) =>
    limits.get(params.id, { apiKey: params.name }),
  );
  serveRoute(router, R.putKeyRateLimit, ({ params, body }) =>
    limits.put(params.id, { apiKey: params.name }, body),
  );
  serveRoute(router, R.removeKeyRateLimit, ({ params }) =>
    limits.remove(params.id, { apiKey: params.name }),
  );
  serveRoute(router, R.getTokenRateLimit, ({ params }) =>
    limits.get(params.id, { scopedTokenId: params.tokenId }),
  );
  serveRoute(router, R.putTokenRateLimit, ({ params, body }) =>
    limits.put(params.id, { scopedTokenId: params.tokenId }, body),
  );
  serveRoute(router, R.removeTokenRateLimit, ({ params }) =>
    limits.remove(params.id, { scopedTokenId: params.tokenId }),
  );
  return router;
}
