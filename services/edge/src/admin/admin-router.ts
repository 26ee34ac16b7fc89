import express, { type Request, type RequestHandler, type Router } from 'express';
import { OPERATOR_ROUTES, createBodyValidator, pathSegment, routePath } from '@gateway/contracts';
import { credentialRefused } from '@gateway/billing-client';
import {
  EXPRESS_METHOD,
  headerOf,
  type InternalRequest,
  type InternalResponse,
} from '@gateway/runtime';
import { checkWebhookUrl } from '../routes/webhook-url.js';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { methodNotAllowed } from '../http/errors.js';
import { withInvitationUrl } from '../dashboard/operator-routes.js';
import { requireAdminToken } from './admin-auth.js';
import { ADMIN_ROUTES, type AdminRoute } from './admin-routes.js';

const FORWARDED_HEADERS = ['Accept', 'Idempotency-Key'];

/**
 * `/admin/v1/*` (decisions §4) behind the admin token: the same paths and bodies as billing's
 * `/internal/v1/admin/*` and, for webhook secrets and deliveries, the dispatcher's internal API.
 * Edge checks the token and the body's shape, then passes the request and the answer through
 * verbatim (`forwardAdmin`, `dispatcher.forward`): the one place that does; the dashboard uses
 * the clients' typed methods. Answers are the contract's (operator-api.ts, dispatcher-api.ts).
 */
export function adminRouter(deps: ConsoleDeps): Router {
  const router = express.Router();
  router.use(deps.authFailures.guard, requireAdminToken(deps.adminToken, deps.authFailures));
  const methodsByPath = new Map<string, string[]>();
  for (const route of ADMIN_ROUTES) {
    const handlers: RequestHandler[] = [];
    if (route.body) handlers.push(...jsonBody(deps.limits.jsonBodyBytes), validated(route, deps));
    handlers.push(forwarder(deps, route));
    router[EXPRESS_METHOD[route.method]](route.path, ...handlers);
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  }
  for (const [path, methods] of methodsByPath) router.all(path, methodNotAllowed(methods));
  return router;
}

// One validator per route, made once; each compiles its schema on the first body it checks.
const BODY_VALIDATORS = new Map(
  ADMIN_ROUTES.flatMap((route) => (route.body ? [[route, createBodyValidator(route.body)]] : [])),
);

function validated(route: AdminRoute, deps: ConsoleDeps): RequestHandler {
  const validate = BODY_VALIDATORS.get(route);
  const field = route.webhookUrlField;
  return (req, _res, next) => {
    validate?.(req.body);
    if (field !== undefined) {
      const url: unknown = (req.body as Record<string, unknown>)[field];
      if (typeof url === 'string') checkWebhookUrl(url, deps.limits.webhookAllowInsecure, field);
    }
    next();
  };
}

function forwarder(deps: ConsoleDeps, route: AdminRoute): RequestHandler {
  return async (req, res) => {
    const request: InternalRequest = {
      method: route.method,
      path: targetPath(route.path, req),
      headers: forwardedHeaders(req),
      ...(route.body ? { body: req.body } : {}),
    };
    if (route.accountMustExist) {
      const account = await deps.billing.forwardAdmin({
        method: 'GET',
        path: routePath(OPERATOR_ROUTES.getAccount, { id: String(req.params.id) }),
        headers: forwardedHeaders(req),
      });
      if (account.status !== 200) {
        relay(res, account, 'billing');
        return;
      }
    }
    const answer =
      route.server === 'billing'
        ? await deps.billing.forwardAdmin(request)
        : await deps.dispatcher.forward(request);
    // This edge's catalog cache must not serve the entry an operator just changed.
    if (route.path.startsWith('/models') && route.method !== 'GET')
      deps.billing.invalidateCatalog();
    if (route.invitationLink && answer.status === 201) {
      const invitation = JSON.parse(answer.body.toString('utf8')) as Parameters<
        typeof withInvitationUrl
      >[0];
      res.status(201).json(withInvitationUrl(invitation, req, deps.dashboard?.publicBaseUrl));
      return;
    }
    relay(res, answer, route.server);
  };
}

/** The route's path with its parameters re-encoded, and the query string as sent. */
function targetPath(pattern: string, req: Request): string {
  const params = req.params as Record<string, string | string[]>;
  const path = pattern.replace(/[:*]([A-Za-z]+)/g, (_m, name: string) => {
    const value = params[name] ?? '';
    return (Array.isArray(value) ? value : [value]).map(pathSegment).join('/');
  });
  const query = req.originalUrl.indexOf('?');
  return query === -1 ? path : `${path}${req.originalUrl.slice(query)}`;
}

function forwardedHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = req.get(name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

function relay(res: express.Response, answer: InternalResponse, target: string): void {
  // The dependency refusing edge's own credential is a deployment fault, not the operator's.
  if (answer.status === 401) throw credentialRefused(target);
  res.status(answer.status);
  const contentType = headerOf(answer, 'content-type');
  if (contentType) res.set('Content-Type', contentType);
  // A 429 (e.g. the dispatcher's rotation limit) says when to retry.
  const retryAfter = headerOf(answer, 'retry-after');
  if (retryAfter) res.set('Retry-After', retryAfter);
  if (answer.status === 204 || answer.body.length === 0) res.end();
  else res.send(answer.body);
}
