import { routePath, type Route, type RouteAnswer, type RouteInput } from '@gateway/contracts';
import { CliError, EXIT } from './errors.js';

export interface AdminClientOptions {
  baseUrl: string;
  adminToken: string;
  timeoutMs: number;
}

/** An answer: `body` is the JSON the route's contract names (`T`), undefined when empty. */
export interface AdminResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** The operator API (`/admin/v1`, decisions §4) over HTTP, with errors in plain words. */
export class AdminClient {
  constructor(private readonly options: AdminClientOptions) {}

  /**
   * One route of the operator API's contract (`OPERATOR_ROUTES`): its answer, typed by it. A
   * route whose contract leaves its answer untyped (a dispatcher relay) names it as `Answer`.
   */
  async call<R extends Route, Answer = RouteAnswer<R>>(
    route: R,
    input: RouteInput<R>,
  ): Promise<Answer> {
    const { body } = await this.request<Answer>(route.method, pathOf(route, input), initOf(input));
    return body;
  }

  /** One route's answer as text, as it came (CSV with `Accept: text/csv`). */
  async callText<R extends Route>(route: R, input: RouteInput<R>): Promise<string> {
    const { text } = await this.request(route.method, pathOf(route, input), initOf(input));
    return text;
  }

  private async request<T = unknown>(
    method: string,
    path: string,
    init: Init = {},
  ): Promise<AdminResponse<T>> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/admin/v1${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.adminToken}`,
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...init.headers,
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const reason = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new CliError(
        `cannot reach the gateway at ${this.options.baseUrl} (${reason})`,
        EXIT.unavailable,
      );
    }
    const text = await response.text();
    let body: unknown = undefined;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!response.ok) throw failure(response.status, body, response.headers.get('Retry-After'));
    return { status: response.status, body: body as T, text };
  }
}

/** The route's path under `/admin/v1`, its parameters filled in, its query appended. */
function pathOf<R extends Route>(route: R, input: RouteInput<R>): string {
  try {
    return routePath(route, input.params, input.query);
  } catch (error) {
    // A name or id that cannot be one path segment names nothing: the gateway would say 404.
    throw new CliError(`${(error as Error).message} (resource_not_found)`, EXIT.refused);
  }
}

type Init = { body?: unknown; headers?: Record<string, string> };

/** The body and headers the caller gives, only those it gives. */
function initOf(input: Init): Init {
  return {
    ...(input.body === undefined ? {} : { body: input.body }),
    ...(input.headers === undefined ? {} : { headers: input.headers }),
  };
}

function failure(status: number, body: unknown, retryAfter: string | null): CliError {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  const detail =
    (typeof error?.message === 'string'
      ? `${error.message} (${String(error.code)})`
      : `HTTP ${status}`) + (status === 429 && retryAfter ? `; retry after ${retryAfter} s` : '');
  if (status === 401 || status === 403) {
    return new CliError(`the gateway refused the admin token: ${detail}`, EXIT.unauthorized);
  }
  if (status >= 500) return new CliError(`the gateway failed: ${detail}`, EXIT.unavailable);
  return new CliError(detail, EXIT.refused);
}
