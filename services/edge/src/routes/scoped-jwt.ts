import express, { type Request, type Router } from 'express';
import { GatewayError, PUBLIC_ROUTES, validateScopedTokenCreate } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { sendJson } from '../http/send-answer.js';
import { callerOf, jsonBody } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';

/**
 * Scoped tokens, for the holder of an API key: create (`POST`), inspect (`GET ?jwt=` or
 * `?jwtoken=`), revoke (`DELETE ?jwt=`). Billing signs, registers and revokes; edge validates.
 */
export function scopedJwtRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const { billing } = deps;
  const { createScopedToken, inspectScopedToken, revokeScopedToken } = PUBLIC_ROUTES;
  const body = jsonBody(deps.limits.jsonBodyBytes);
  mountPublicRoute(router, createScopedToken, [], ...body, async (req, res) => {
    validateScopedTokenCreate(req.body, { nowS: Math.floor(Date.now() / 1000) });
    const idempotency = await deps.idempotency.begin(req, res, req.body);
    if (idempotency === 'replayed') return;
    try {
      const created = await billing.createScopedToken(callerOf(res).accountId, req.body);
      await sendJson(res, 200, created, idempotency);
    } catch (error) {
      await idempotency?.release();
      throw error;
    }
  });
  mountPublicRoute(router, inspectScopedToken, [], async (req, res) => {
    res.json(await billing.inspectScopedToken(callerOf(res).accountId, tokenParam(req)));
  });
  mountPublicRoute(router, revokeScopedToken, [], async (req, res) => {
    res.json(await billing.revokeScopedToken(callerOf(res).accountId, tokenParam(req)));
  });
  refuseOtherMethods(router, createScopedToken.path);
  return router;
}

/** The token from `?jwt=` (or `?jwtoken=`, decisions §3). */
function tokenParam(req: Request): string {
  const value = req.query.jwt ?? req.query.jwtoken;
  if (typeof value !== 'string' || value.length === 0) {
    throw new GatewayError('invalid_request_body', 'query parameter jwt is required', {
      param: 'jwt',
    });
  }
  return value;
}
