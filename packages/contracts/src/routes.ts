import type { Static, TSchema } from '@sinclair/typebox';
import { pathSegment } from './identifiers.js';

/*
 * A route of an HTTP API declared once, as data: its method, its path with parameters, the
 * body it takes and the answer it gives (TypeBox schemas, so the types come from them). Servers
 * mount it (`serveRoute` in @gateway/runtime), clients call it (`routePath`, and the typed
 * callers built on it), and the OpenAPI document is generated from it. No framework type here:
 * the dashboard app imports this module in the browser.
 */

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Refusals a route may give beyond every route's (400, 401, 404, 500, 503). */
export type RouteRefusal = 405 | 409 | 429;

export interface Route {
  readonly method: RouteMethod;
  /**
   * The path under its API's prefix: `:name` is one segment, `*name` the rest of the path (a
   * model id containing `/`).
   */
  readonly path: string;
  readonly summary: string;
  /** The JSON body it takes; none: it takes no body. */
  readonly body?: TSchema;
  /** The JSON answer it gives; none: a 204, or an answer the route leaves untyped (CSV, a relay). */
  readonly answer?: TSchema;
  /** The status of success when it is not 200 (202: accepted, the work is queued). */
  readonly status?: 201 | 202 | 204;
  readonly refusals?: readonly RouteRefusal[];
}

/** A table of routes by name, kept literal so each route's path and schemas stay in its type. */
export function defineRoutes<const Routes extends Record<string, Route>>(routes: Routes): Routes {
  return routes;
}

type Segments<Path extends string> = Path extends `${infer Head}/${infer Tail}`
  ? Head | Segments<Tail>
  : Path;
type ParamName<Segment> = Segment extends `:${infer Name}`
  ? Name
  : Segment extends `*${infer Name}`
    ? Name
    : never;

/** The route's path parameters by name, from its path (`/accounts/:id` → `{ id: string }`). */
export type RouteParams<R extends Route> = {
  readonly [Name in ParamName<Segments<R['path']>>]: string;
};
/** The body the route takes (undefined: none). */
export type RouteBody<R extends Route> = R extends { body: infer Body extends TSchema }
  ? Static<Body>
  : undefined;
/** The answer the route gives: its schema's type; void for a 204; unknown when left untyped. */
export type RouteAnswer<R extends Route> = R extends { answer: infer Answer extends TSchema }
  ? Static<Answer>
  : R extends { status: 204 }
    ? void
    : unknown;

/** What a caller gives: the parameters the path names, the body it takes, a query, headers. */
export type RouteInput<R extends Route> = (keyof RouteParams<R> extends never
  ? { params?: undefined }
  : { params: RouteParams<R> }) &
  (R extends { body: TSchema } ? { body: RouteBody<R> } : { body?: undefined }) & {
    query?: URLSearchParams;
    headers?: Record<string, string>;
  };

const PARAMETER = /([:*])([A-Za-z_]+)/g;

/** The names of the route's path parameters, in order. */
export function routeParamNames(route: Route): string[] {
  return [...route.path.matchAll(PARAMETER)].map(([, , name]) => name!);
}

/**
 * The route's path with its parameters filled in, each segment encoded (`*name`: each of its
 * `/`-separated segments), and the query appended. An unsafe segment (`..`, empty) is
 * `resource_not_found`, as it would be on the server.
 */
export function routePath<R extends Route>(
  route: R,
  params?: RouteParams<R>,
  query?: URLSearchParams,
): string {
  const values = (params ?? {}) as Record<string, string | undefined>;
  const path = route.path.replace(PARAMETER, (_match, kind: string, name: string) => {
    const value = values[name];
    if (value === undefined) throw new TypeError(`${route.path}: no value for :${name}`);
    return kind === '*' ? value.split('/').map(pathSegment).join('/') : pathSegment(value);
  });
  return query === undefined || query.size === 0 ? path : `${path}?${query.toString()}`;
}

/** The route's path as an OpenAPI path template (`/models/*model` → `/models/{model}`). */
export const routeTemplate = (route: Route): string => route.path.replace(PARAMETER, '{$2}');

/** The route's success status: 200 unless it says otherwise. */
export const routeStatus = (route: Route): 200 | 201 | 202 | 204 => route.status ?? 200;
