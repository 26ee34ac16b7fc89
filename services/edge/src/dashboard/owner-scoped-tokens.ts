import express, { type Router } from 'express';
import { validateScopedTokenCreate } from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { ownerAccountId } from './owner-routes.js';
import { PAGE_PARAMS, pickQuery } from './query.js';

/**
 * `/dashboard/api/scoped-tokens` (owners, after `ownerOnly`): the account's registered tokens,
 * creation with `POST /v1/scoped-jwt`'s options (the token answered once, never stored), and
 * revocation by id, which billing scopes to the session's account.
 */
export function scopedTokenRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  router.get('/', async (req, res) => {
    const page = new URLSearchParams(pickQuery(req.query, PAGE_PARAMS));
    res.json(await deps.billing.dashboard.listScopedTokens(ownerAccountId(res), page));
  });
  router.post('/', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    validateScopedTokenCreate(req.body, { nowS: Math.floor(Date.now() / 1000) });
    res.status(201).json(await deps.billing.createScopedToken(ownerAccountId(res), req.body));
  });
  router.post('/:id/revoke', async (req, res) => {
    const tokenId = req.params.id ?? '';
    res.json(await deps.billing.dashboard.revokeScopedToken(ownerAccountId(res), tokenId));
  });
  return router;
}
