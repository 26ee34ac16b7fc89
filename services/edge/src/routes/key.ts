import express, { type RequestHandler, type Router } from 'express';
import { PUBLIC_ROUTES, rateLimitHeaders } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { credentialRequired, noteAuthentication } from '../http/auth.js';
import { stateOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import { keyReads } from './key-reads.js';

/** Nothing about this request is counted, on its way out either (`rateLimitOnErrors`). */
const uncounted: RequestHandler = (_req, res, next) => {
  stateOf(res).uncounted = true;
  next();
};

/**
 * `GET /v1/key`: the calling API key or scoped token as billing sees it — its budgets
 * with spent, reserved, remaining and resets_at, a token's spending limit and spend, the
 * account's rate limit. Mounted before `authenticate`: billing checks the credential itself and
 * counts nothing, so a client watching its budget does not use up its requests. Failed
 * credentials still count against the client's address like anywhere else.
 */
export function keyRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const { billing, authFailures } = deps;
  const route = PUBLIC_ROUTES.key;
  router.all(route.path, uncounted);
  const reads = keyReads(authFailures);
  const guards = [credentialRequired(authFailures), reads.guard];
  mountPublicRoute(router, route, guards, async (req, res) => {
    try {
      const info = await billing.keyInfo(req.get('Authorization'));
      authFailures.accepted(req);
      await reads.accepted(req);
      const { rate_limit: limit } = info;
      res.set(
        rateLimitHeaders({
          allowed: true,
          limit: limit.limit_per_minute,
          remaining: limit.remaining,
          resetMs: Date.parse(limit.resets_at),
          retryAfterS: 0,
        }),
      );
      res.json(info);
    } catch (error) {
      await noteAuthentication(req, res, authFailures, error);
      throw error;
    }
  });
  refuseOtherMethods(router, route.path);
  return router;
}
