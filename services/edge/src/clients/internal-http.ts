import pRetry from 'p-retry';
import { GatewayError, assertNormalizedPath } from '@gateway/contracts';
import { currentRequestId } from '@gateway/runtime';

/**
 * HTTP to another gateway service's internal API: its base URL, the `X-Internal-Token`
 * credential, and a bound on every call. A call that gets no answer in time, or cannot connect,
 * is 503 `service_unavailable` (the dependency is down), never a hung request. Calls marked
 * `retry` (idempotent ones) are tried again once when the connection failed before any answer.
 */

export const INTERNAL_TOKEN_HEADER = 'X-Internal-Token';

export interface InternalHttpOptions {
  /** For messages and logs: `billing`, `dispatcher`. */
  service: string;
  baseUrl: string;
  token: string;
  timeoutMs: number;
}

export interface InternalRequest {
  method: string;
  /** Path with query, e.g. `/internal/v1/models`. */
  path: string;
  /** JSON-serialised when given. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Idempotent call: one more attempt when the connection failed. */
  retry?: boolean;
}

export interface InternalResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

export type InternalHttp = (request: InternalRequest) => Promise<InternalResponse>;

class ConnectionFailure extends Error {}

export function createInternalHttp(options: InternalHttpOptions): InternalHttp {
  const attempt = async (request: InternalRequest): Promise<InternalResponse> => {
    const requestId = currentRequestId();
    const headers: Record<string, string> = {
      ...(requestId === undefined ? {} : { 'X-Request-Id': requestId }),
      ...request.headers,
      [INTERNAL_TOKEN_HEADER]: options.token,
    };
    if (request.body !== undefined) headers['Content-Type'] = 'application/json';
    const url = new URL(request.path, options.baseUrl);
    assertNormalizedPath(url, request.path);
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: 'manual',
      });
      return {
        status: response.status,
        headers: response.headers,
        body: Buffer.from(await response.arrayBuffer()),
      };
    } catch (error) {
      if (isTimeout(error)) throw unavailable(options, 'did not answer in time', error);
      throw new ConnectionFailure(`${options.service} unreachable`, { cause: error });
    }
  };

  return async (request) => {
    try {
      return await pRetry(() => attempt(request), {
        retries: request.retry ? 1 : 0,
        minTimeout: 50,
        shouldRetry: ({ error }) => error instanceof ConnectionFailure,
      });
    } catch (error) {
      if (error instanceof ConnectionFailure) throw unavailable(options, 'is unreachable', error);
      throw error;
    }
  };
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

function unavailable(options: InternalHttpOptions, what: string, cause: unknown): GatewayError {
  return new GatewayError('service_unavailable', `A gateway dependency ${what}; retry shortly`, {
    details: { retryAfterS: 1, dependency: options.service },
    cause,
  });
}

/** The JSON of an answer (`{}` for an empty one). */
export function jsonOf<T>(response: InternalResponse): T {
  if (response.body.length === 0) return {} as T;
  return JSON.parse(response.body.toString('utf8')) as T;
}
