import type { Request, RequestHandler, Response, Router } from 'express';
import {
  createBodyValidator,
  routeStatus,
  type Route,
  type RouteAnswer,
  type RouteBody,
  type RouteMethod,
  type RouteParams,
} from '@gateway/contracts';

/** What a route's handler receives: the path's parameters and the body, checked by the contract. */
export interface RouteCall<R extends Route> {
  params: RouteParams<R>;
  body: RouteBody<R>;
  req: Request;
  res: Response;
}

export type RouteHandler<R extends Route> = (call: RouteCall<R>) => Promise<RouteAnswer<R>>;

/** The Express router method of each HTTP method a route may have. */
export const EXPRESS_METHOD = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
} as const satisfies Record<RouteMethod, keyof Router>;

/**
 * Mounts one route of a contract (`packages/contracts`, e.g. `OPERATOR_ROUTES`) on a router:
 * the body is validated by the route's schema before the handler runs (400 naming the field),
 * and the handler's answer, typed by the route's answer schema, is sent with the route's status
 * (a 204 with no body). `before` runs first (a JSON body parser, a guard); the error handler is
 * the service's.
 */
export function serveRoute<R extends Route>(
  router: Router,
  route: R,
  handle: RouteHandler<R>,
  before: readonly RequestHandler[] = [],
): void {
  const validate = route.body === undefined ? undefined : createBodyValidator(route.body);
  const status = routeStatus(route);
  router[EXPRESS_METHOD[route.method]](
    route.path,
    ...before,
    async (req: Request, res: Response) => {
      const body = (validate === undefined ? undefined : validate(req.body)) as RouteBody<R>;
      const answer = await handle({ params: paramsOf<R>(req), body, req, res });
      if (status === 204) res.status(204).end();
      else res.status(status).json(answer);
    },
  );
}

/** Express 5 gives a `*name` parameter as its segments: the contract's is the path they form. */
function paramsOf<R extends Route>(req: Request): RouteParams<R> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.params as Record<string, string | string[]>)) {
    params[name] = Array.isArray(value) ? value.join('/') : value;
  }
  return params as RouteParams<R>;
}
