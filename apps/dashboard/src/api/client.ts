import { DASHBOARD_API_PREFIX, DASHBOARD_CSRF_HEADER } from '@gateway/contracts/dashboard-api';
import { GatewayError } from '@gateway/contracts/errors';
import {
  routePath,
  type Route,
  type RouteAnswer,
  type RouteInput,
} from '@gateway/contracts/routes';

/** A refusal from the dashboard API, carrying the gateway's stable error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

// The session's CSRF token lives in memory only: the cookie is httpOnly, the token is re-read
// from GET /session after a reload.
let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

interface ErrorBody {
  error?: { code?: string; message?: string };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function retryAfter(response: Response): number | null {
  const value = Number(response.headers.get('Retry-After'));
  return Number.isFinite(value) && value > 0 ? value : null;
}

/**
 * One call to `/dashboard/api{path}`: same-origin credentials (the session cookie), JSON in and
 * out, the CSRF header on every state change. Throws `ApiError` on any non-2xx answer. Only
 * `callRoute` calls it: the answer's type is the route's.
 */
async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const sent: Record<string, string> = { Accept: 'application/json', ...headers };
  if (body !== undefined) sent['Content-Type'] = 'application/json';
  if (!SAFE_METHODS.has(method) && csrfToken !== null) sent[DASHBOARD_CSRF_HEADER] = csrfToken;
  let response: Response;
  try {
    response = await fetch(`${DASHBOARD_API_PREFIX}${path}`, {
      method,
      credentials: 'same-origin',
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The gateway could not be reached.');
  }
  const json = parseJson(await response.text());
  if (!response.ok) {
    const error = (json as ErrorBody | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? 'unknown_error',
      error?.message ?? `The gateway answered ${response.status}.`,
      retryAfter(response),
    );
  }
  return json as T;
}

export const isApiError = (error: unknown, code?: string): error is ApiError =>
  error instanceof ApiError && (code === undefined || error.code === code);

/**
 * The route's path under `/dashboard/api`, its parameters filled in. A parameter that names
 * nothing (empty, `..`) is refused here as the server would refuse it (404).
 */
function pathOf<R extends Route>(route: R, input: RouteInput<R>): string {
  try {
    return routePath(route, input.params, input.query);
  } catch (error) {
    if (error instanceof GatewayError) throw new ApiError(error.status, error.code, error.message);
    throw error;
  }
}

/**
 * One route of a dashboard API contract (dashboard-routes.ts, dashboard-owner-routes.ts,
 * dashboard-operator-routes.ts): its answer, typed by it.
 */
export async function callRoute<R extends Route>(
  route: R,
  input: RouteInput<R>,
): Promise<RouteAnswer<R>> {
  return api<RouteAnswer<R>>(route.method, pathOf(route, input), input.body, input.headers);
}

/**
 * The address of a route's download (its CSV, `?format=csv` in the input's query): a plain link,
 * so the session cookie goes with it and nothing is built in the page.
 */
export function routeHref<R extends Route>(route: R, input: RouteInput<R>): string {
  return `${DASHBOARD_API_PREFIX}${pathOf(route, input)}`;
}

/** An owner's own key only: a token's setting is an operator's to change. */
export function ownKeyOnly(kind: 'api_key' | 'scoped_token'): void {
  if (kind !== 'api_key') {
    throw new ApiError(404, 'resource_not_found', "An operator sets a scoped token's settings.");
  }
}
