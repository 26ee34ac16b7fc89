import express, { type Router } from 'express';
import {
  validateScopedTokenCreate,
  pathSegment,
  type DashboardScopedToken,
  type DashboardScopedTokenList,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { accountPath } from './owner-routes.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sessionOf } from './session-routes.js';

/**
 * `/dashboard/api/scoped-tokens` (owners, after `ownerOnly`): the account's registered tokens,
 * creation with `POST /v1/scoped-jwt`'s options (the token answered once, never stored), and
 * revocation by id, which billing scopes to the session's account.
 */
export function scopedTokenRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  router.get('/', async (req, res) => {
    const list = await deps.billing.dashboard<DashboardScopedTokenList>(
      'GET',
      `${accountPath(res)}/scoped-tokens?${pickQuery(req.query, PAGE_PARAMS)}`,
    );
    res.json(list);
  });
  router.post('/', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    validateScopedTokenCreate(req.body, { nowS: Math.floor(Date.now() / 1000) });
    const accountId = sessionOf(res).account?.id ?? '';
    res.status(201).json(await deps.billing.createScopedToken(accountId, req.body));
  });
  router.post('/:id/revoke', async (req, res) => {
    const token = await deps.billing.dashboard<DashboardScopedToken>(
      'POST',
      `${accountPath(res)}/scoped-tokens/${pathSegment(req.params.id ?? '')}/revoke`,
    );
    res.json(token);
  });
  return router;
}
