/**
 * Budgets over HTTP: the operator API's budget routes (edge exposes them under
 * `/admin/v1`) and `POST /key`, the calling credential's own view behind edge's `GET /v1/key`.
 */
import express, { type Router } from 'express';
import { allowInternalCallers } from '@gateway/runtime';
import {
  AuthenticateRequestSchema,
  BudgetPutRequestSchema,
  createBodyValidator,
  microDzdToDzd,
  type AuthenticateRequest,
  type BudgetList,
  type BudgetPutRequest,
  type BudgetView,
  type KeyInfo,
} from '@gateway/contracts';
import type { BillingServices } from './internal-routes.js';
import { rateSubjectOf } from '../identity/index.js';

const validateBudgetPut = createBodyValidator<BudgetPutRequest>(BudgetPutRequestSchema);
const validateAuthenticate = createBodyValidator<AuthenticateRequest>(AuthenticateRequestSchema);

/** Mounted with the operator API (`/internal/v1/admin`, edge's credential only). */
export function adminBudgetRoutes({ identity, budgets }: BillingServices): Router {
  const router = express.Router();
  const key = '/accounts/:id/api-keys/:name/budget';
  const token = '/accounts/:id/scoped-tokens/:tokenId/budget';

  router.get('/accounts/:id/budgets', async (req, res) => {
    // An unknown account is 404, not an empty list: a typo must not read as "no budgets".
    await identity.accounts.get(req.params.id);
    res.json((await budgets.list(req.params.id)) satisfies BudgetList);
  });

  router.get(key, async (req, res) => {
    res.json((await budgets.getForKey(req.params.id, req.params.name)) satisfies BudgetView);
  });
  router.put(key, async (req, res) => {
    const body = validateBudgetPut(req.body);
    res.json((await budgets.putForKey(req.params.id, req.params.name, body)) satisfies BudgetView);
  });
  router.delete(key, async (req, res) => {
    await budgets.removeForKey(req.params.id, req.params.name);
    res.status(204).end();
  });

  router.get(token, async (req, res) => {
    res.json((await budgets.getForToken(req.params.id, req.params.tokenId)) satisfies BudgetView);
  });
  router.put(token, async (req, res) => {
    const body = validateBudgetPut(req.body);
    const view = await budgets.putForToken(req.params.id, req.params.tokenId, body);
    res.json(view satisfies BudgetView);
  });
  router.delete(token, async (req, res) => {
    await budgets.removeForToken(req.params.id, req.params.tokenId);
    res.status(204).end();
  });
  return router;
}

/**
 * `POST /key` (edge's `GET /v1/key`): the credential in the body, as for `/authenticate`, and
 * never counted against the rate limit — a client checking its budget must not spend its requests.
 */
export function keyInfoRoutes({ identity, budgets }: BillingServices): Router {
  const router = express.Router();
  router.post('/key', allowInternalCallers('edge'), async (req, res) => {
    const body = validateAuthenticate(req.body);
    const principal = await identity.authenticator.authenticate(body.authorization);
    const { accountId, apiKeyName, token } = principal;
    // A registered token's row has its spend; an unregistered client-minted one spent nothing.
    const [rateLimit, registered] = await Promise.all([
      identity.rateLimiter.peek(rateSubjectOf(principal)),
      token ? identity.store.findScopedTokenByDigest(token.digest) : null,
    ]);
    const tokenId = token ? (registered?.id ?? token.id) : null;
    const answer: KeyInfo = {
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
    res.json(answer);
  });
  return router;
}
