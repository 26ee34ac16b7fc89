/**
 * Billing's internal API (`BILLING_ROUTES`, packages/contracts) as its handlers mount it: each
 * route behind the credential its table entry names (`caller`), so who may call what is
 * declared once, beside the route.
 */
import type { RequestHandler, Router } from 'express';
import type { BillingCaller, BillingRoute } from '@gateway/contracts';
import { allowInternalCallers, serveRoute, type RouteHandler } from '@gateway/runtime';

const SERVICES: Record<BillingCaller, readonly string[]> = {
  edge: ['edge'],
  worker: ['worker'],
  both: ['edge', 'worker'],
};

/** Least privilege: only the route's callers; the other service's credential is 403 `forbidden`. */
export function callerGuard(route: BillingRoute): RequestHandler {
  return allowInternalCallers(...SERVICES[route.caller]);
}

/**
 * `serveRoute` behind the route's caller guard: the credential is checked first, then `before`
 * runs (a body parser of the route's own), then the body is validated and the handler answers.
 */
export function serveBillingRoute<R extends BillingRoute>(
  router: Router,
  route: R,
  handle: RouteHandler<R>,
  before: readonly RequestHandler[] = [],
): void {
  serveRoute(router, route, handle, [callerGuard(route), ...before]);
}
