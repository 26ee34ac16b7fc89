/**
 * Budgets over HTTP: the operator API's budget routes (edge exposes them under
 * `/admin/v1`) and `POST /key`, the calling credential's own view behind edge's `GET /v1/key`.
 */
import express, { type Router } from 'express';
import { serveRoute } from '@gateway/runtime';
import {
  BILLING_ROUTES,
  OPERATOR_ROUTES as R,
  microDzdToDzd,
  type KeyInfo,
} from '@gateway/contracts';
import type { BillingServices } from './internal-routes.js';
import { serveBillingRoute } from './billing-route.js';
import { rateSubjectOf } from '../identity/index.js';

/** Mounted with the operator API (`/internal/v1/admin`, edge's credential only). */
export function adminBudgetRoutes({ identity, budgets }: BillingServices): Router {
  const router = express.Router();
  serveRoute(router, R.listBudgets, async ({ params }) => {
    // An unknown account is 404, not an empty list: a typo must not read as "no budgets".
    await identity.accounts.get(params.id);
    return budgets.list(params.id);
  });
  serveRoute(router, R.getKeyBudget, ({ params }) => budgets.getForKey(params.id, params.name));
  serveRoute(router, R.putKeyBudget, ({ params, body }) =>
    budgets.putForKey(params.id, params.name, body),
  );
  serveRoute(router, R.removeKeyBudget, ({ params }) =>
    budgets.removeForKey(params.id, params.name),
  );
  serveRoute(router, R.getTokenBudget, ({ params }) =>
    budgets.getForToken(params.id, params.tokenId),
  );
  serveRoute(router, R.putTokenBudget, ({ params, body }) =>
    budgets.putForToken(params.id, params.tokenId, body),
  );
  serveRoute(router, R.removeTokenBudget, ({ params }) =>
    budgets.removeForToken(params.id, params.tokenId),
  );
  return router;
}

/**
 * `POST /key` (`BILLING_ROUTES.keyInfo`, edge's `GET /v1/key`): the credential in the body, as
 * for `/authenticate`, and never counted against the rate limit — a client checking its budget
 * must not spend its requests.
 */
export function keyInfoRoutes({ identity, budgets }: BillingServices): Router {
  const router = express.Router();
  serveBillingRoute(router, BILLING_ROUTES.keyInfo, async ({ body }): Promise<KeyInfo> => {
    const principal = await identity.authenticator.authenticate(body.authorization);
    const { accountId, apiKeyName, token } = principal;
    // A registered token's row has its spend; an unregistered client-minted one spent nothing.
    const [rateLimit, registered] = await Promise.all([
      identity.rateLimiter.peek(rateSubjectOf(principal)),
      token ? identity.store.findScopedTokenByDigest(token.digest) : null,
    ]);
    const tokenId = token ? (registered?.id ?? token.id) : null;
    return {
      object: 'key',
      kind: principal.kind,
      account_id: accountId,
      api_key: apiKeyName,
      scoped_token_id: tokenId,
      budgets: await budgets.forCaller(accountId, apiKeyName, tokenId),
      spending_limit_dzd:
        token?.spendingLimitMicroDzd == null ? null : microDzdToDzd(token.spendingLimitMicroDzd),
      spent_dzd: token ? microDzdToDzd(registered?.spentMicroDzd ?? 0n) : null,
      rate_limit: {
        limit_per_minute: rateLimit.limit,
        // peek answers as if this read were the window's next request: it is not one.
        remaining: rateLimit.allowed ? rateLimit.remaining + 1 : 0,
        resets_at: new Date(rateLimit.resetMs).toISOString(),
        applies_to: rateLimit.scope ?? 'account',
        tokens: rateLimit.tokens
          ? {
              limit_per_minute: rateLimit.tokens.limit,
              remaining: rateLimit.tokens.remaining,
              resets_at: new Date(rateLimit.tokens.resetMs).toISOString(),
            }
          : null,
      },
    };
  });
  return router;
}
