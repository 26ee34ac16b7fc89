/**
 * Per-key rate limits over HTTP: the operator API's routes, which edge exposes
 * under `/admin/v1` (`.../api-keys/{name}/rate-limit`, `.../scoped-tokens/{id}/rate-limit`), and
 * the account's list of them (`.../rate-limits`).
 */
import express, { type Router } from 'express';
import {
  KeyRateLimitPutRequestSchema,
  createBodyValidator,
  type KeyRateLimitList,
  type KeyRateLimitPutRequest,
  type KeyRateLimitView,
} from '@gateway/contracts';
import type { KeyLimitOwner } from '../rate-limits/key-rate-limits.js';
import type { BillingServices } from './internal-routes.js';

const validatePut = createBodyValidator<KeyRateLimitPutRequest>(KeyRateLimitPutRequestSchema);

/** Mounted with the operator API (`/internal/v1/admin`, edge's credential only). */
export function adminKeyLimitRoutes({ identity }: BillingServices): Router {
  const router = express.Router();
  const limits = identity.keyRateLimits;
  type Params = Record<string, string | string[] | undefined>;
  const param = (params: Params, name: string) => String(params[name]);
  const owners: [string, (params: Params) => KeyLimitOwner][] = [
    ['/accounts/:id/api-keys/:name/rate-limit', (p) => ({ apiKey: param(p, 'name') })],
    [
      '/accounts/:id/scoped-tokens/:tokenId/rate-limit',
      (p) => ({ scopedTokenId: param(p, 'tokenId') }),
    ],
  ];
  router.get('/accounts/:id/rate-limits', async (req, res) => {
    const accountId = param(req.params, 'id');
    // An unknown account is 404, not an empty list: a typo must not read as "no limits".
    await identity.accounts.get(accountId);
    res.json((await limits.list(accountId)) satisfies KeyRateLimitList);
  });
  for (const [path, ownerOf] of owners) {
    router.get(path, async (req, res) => {
      const view = await limits.get(param(req.params, 'id'), ownerOf(req.params));
      res.json(view satisfies KeyRateLimitView);
    });
    router.put(path, async (req, res) => {
      const body = validatePut(req.body);
      const view = await limits.put(param(req.params, 'id'), ownerOf(req.params), body);
      res.json(view satisfies KeyRateLimitView);
    });
    router.delete(path, async (req, res) => {
      await limits.remove(param(req.params, 'id'), ownerOf(req.params));
      res.status(204).end();
    });
  }
  return router;
}
