import type { RequestHandler, Router } from 'express';
import { publicMethodsAt, type PublicRoute, type RouteMethod } from '@gateway/contracts';
import { requireApiKey } from './auth.js';
import { methodNotAllowed } from './errors.js';

/*
 * The public API's routes mounted from their contracts (`PUBLIC_ROUTES`): the method and path
 * are the contract's, a route the contract says is for API keys only gets that check, and a
 * path's other methods are refused with the ones the contract declares there. Handlers stay
 * hand-written (they stream, take uploads and answer in the SDKs' shapes), so unlike
 * `serveRoute` this does not validate or type them.
 */

/**
 * Mounts `handlers` for `route` on `router` (mounted at `/v1`). `before` runs ahead of the
 * credential check (an inference route's credential-required guard).
 */
export function mountPublicRoute(
  router: Router,
  route: PublicRoute,
  before: readonly RequestHandler[],
  ...handlers: RequestHandler[]
): void {
  const guard = route.credential === 'api_key' ? [requireApiKey] : [];
  const verb = route.method.toLowerCase() as Lowercase<RouteMethod>;
  router[verb](route.path, ...before, ...guard, ...handlers);
}

/** 405 for every method at `path` the public API does not declare (after `before`). */
export function refuseOtherMethods(
  router: Router,
  path: string,
  before: readonly RequestHandler[] = [],
): void {
  router.all(path, ...before, methodNotAllowed(publicMethodsAt(path)));
}
