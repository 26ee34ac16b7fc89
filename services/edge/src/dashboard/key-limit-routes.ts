import express, { type Request, type Router } from 'express';
import type { BudgetOwnerRef } from '@gateway/billing-client';
import {
  KeyRateLimitPutRequestSchema,
  createBodyValidator,
  type KeyRateLimitList,
  type KeyRateLimitPutRequest,
  type KeyRateLimitView,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { accountIdOf } from './operator-routes.js';
import { ownerAccountId } from './owner-routes.js';

/*
 * Per-key rate limits in the dashboard, through the same billing client
 * methods as the operator API (`/admin/v1/accounts/{id}/…/rate-limit`), so the same contract
 * validates both. The account's own requests per minute stays the operator's (account page).
 */

const validatePut = createBodyValidator<KeyRateLimitPutRequest>(KeyRateLimitPutRequestSchema);

const keyOf = (req: Request): BudgetOwnerRef => ({ apiKey: String(req.params.name) });
const tokenOf = (req: Request): BudgetOwnerRef => ({ scopedTokenId: String(req.params.tokenId) });

/**
 * Owners (after `ownerOnly`): the account's key and token limits, and their own keys' limits
 * set or removed — a tighter limit protects them from a leaked key or a runaway loop; the
 * account's limit still applies above it. The account is the session's, so another account's
 * key is an unknown key (404). Token limits are read here and set by operators.
 */
export function ownerKeyLimitRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  router.get('/rate-limits', async (_req, res) => {
    const list: KeyRateLimitList = await operator.listKeyRateLimits(ownerAccountId(res));
    res.json(list);
  });
  const path = '/api-keys/:name/rate-limit';
  router.put(path, ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    const body = validatePut(req.body);
    const view: KeyRateLimitView = await operator.putKeyRateLimit(
      ownerAccountId(res),
      keyOf(req),
      body,
    );
    res.json(view);
  });
  router.delete(path, async (req, res) => {
    await operator.removeKeyRateLimit(ownerAccountId(res), keyOf(req));
    res.status(204).end();
  });
  return router;
}

/** Operators (under `/operator`, after `operatorsOnly`: finance reads only). */
export function operatorKeyLimitRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  const body = jsonBody(deps.limits.jsonBodyBytes);
  router.get('/accounts/:id/rate-limits', async (req, res) => {
    const list: KeyRateLimitList = await operator.listKeyRateLimits(accountIdOf(req));
    res.json(list);
  });
  const owners = [
    ['/accounts/:id/api-keys/:name/rate-limit', keyOf],
    ['/accounts/:id/scoped-tokens/:tokenId/rate-limit', tokenOf],
  ] as const;
  for (const [path, ownerOf] of owners) {
    router.put(path, ...body, async (req, res) => {
      const input = validatePut(req.body);
      const view: KeyRateLimitView = await operator.putKeyRateLimit(
        accountIdOf(req),
        ownerOf(req),
        input,
      );
      res.json(view);
    });
    router.delete(path, async (req, res) => {
      await operator.removeKeyRateLimit(accountIdOf(req), ownerOf(req));
      res.status(204).end();
    });
  }
  return router;
}
