import express, { type RequestHandler, type Router } from 'express';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { GatewayError, PUBLIC_ROUTES, rateLimitHeaders } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { credentialRequired, digestOf, noteAuthentication } from '../http/auth.js';
import { stateOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';

/** Nothing about this request is counted, on its way out either (`rateLimitOnErrors`). */
const uncounted: RequestHandler = (_req, res, next) => {
  stateOf(res).uncounted = true;
  next();
};

/**
 * Reads of `/v1/key` per credential and minute, per edge process. Not the account's limit (that
 * would spend requests on watching a budget), but a bound all the same: each read costs billing
 * an authentication and a few queries.
 */
export const KEY_READS_PER_MINUTE = 60;

/** 429 once a credential read its key more than KEY_READS_PER_MINUTE times this minute. */
function keyReadLimit(): RequestHandler {
  const limiter = new RateLimiterMemory({ points: KEY_READS_PER_MINUTE, duration: 60 });
  return (req, _res, next) => {
    // The credential's digest, never the credential, is the limiter's key.
    const id = digestOf(req.get('Authorization') ?? '');
    limiter.consume(id, 1).then(
      () => next(),
      (refusal: { msBeforeNext?: number }) => {
        const retryAfterS = Math.max(1, Math.ceil((refusal.msBeforeNext ?? 1000) / 1000));
        next(
          new GatewayError(
            'rate_limit_exceeded',
            `At most ${KEY_READS_PER_MINUTE} reads of /v1/key per minute per credential; ` +
              `retry in ${retryAfterS} s`,
            { details: { retryAfterS } },
          ),
        );
      },
    );
  };
}

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
  const guards = [credentialRequired(authFailures), keyReadLimit()];
  mountPublicRoute(router, route, guards, async (req, res) => {
    try {
      const info = await billing.keyInfo(req.get('Authorization'));
      authFailures.accepted(req);
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
