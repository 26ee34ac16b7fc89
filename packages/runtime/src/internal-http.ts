import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { Pool } from 'undici';
import pRetry from 'p-retry';
import { GatewayError, assertNormalizedPath } from '@gateway/contracts';
import {
  injectTraceContext,
  markSpanFailed,
  SpanKind,
  tracingEnabled,
  withSpan,
} from '@gateway/observability';
import { currentRequestId, pathOf, REQUEST_ID_HEADER } from './app.js';

/**
 * HTTP to another gateway service's internal API over a pool of keep-alive connections
 * (undici's Pool: a CPU profile showed `fetch` per call taking a third of edge's and the worker's
 * busy time). Every call carries the caller's credential and the current request id, and is
 * bounded: no answer in time or no connection is 503 `service_unavailable`, never a hung request.
 * Calls marked `retry` (idempotent ones) are tried again on a failed connection (and, with
 * `retryServerErrors`, on a 5xx), with backoff. The called service checks the credential with
 * `identifyInternalCaller` (below): both sides of the internal API live here.
 */

/** The header carrying the calling service's credential. */
export const INTERNAL_TOKEN_HEADER = 'x-internal-token';

export interface InternalHttpOptions {
  /** For messages and logs: `billing`, `dispatcher`. */
  service: string;
  baseUrl: string;
  token: string;
  timeoutMs: number;
  /** Pooled connections to the service; 32 by default. */
  connections?: number;
  /** Attempts of a `retry` call in all; 2 by default. */
  attempts?: number;
  /** First backoff delay; 50 ms by default. */
  minRetryDelayMs?: number;
  /** Retry `retry` calls answered 5xx too (the worker's settlement must survive a blip). */
  retryServerErrors?: boolean;
}

export interface InternalRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with query, e.g. `/internal/v1/models`. */
  path: string;
  /** JSON-serialised when given. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Idempotent call: tried again when the connection failed. */
  retry?: boolean;
}

export interface InternalResponse {
  status: number;
  /** Header values by lower-case name. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface InternalHttp {
  (request: InternalRequest): Promise<InternalResponse>;
  close(): Promise<void>;
}

class ConnectionFailure extends Error {}
class ServerFailure extends Error {
  constructor(readonly response: InternalResponse) {
    super(`answered ${response.status}`);
  }
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ABORT_ERR',
]);

// Below the server side's 5 s keep-alive, so the client never reuses a socket being closed.
const KEEP_ALIVE_TIMEOUT_MS = 4_000;

export function createInternalHttp(options: InternalHttpOptions): InternalHttp {
  const base = new URL(options.baseUrl);
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 32,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_TIMEOUT_MS,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { timeout: options.timeoutMs },
  });

  const tracing = tracingEnabled();
  const attempt = async (request: InternalRequest): Promise<InternalResponse> => {
    assertNormalizedPath(new URL(request.path, base), request.path);
    const requestId = currentRequestId();
    const headers: Record<string, string> = {
      ...(requestId === undefined ? {} : { [REQUEST_ID_HEADER]: requestId }),
      ...request.headers,
      [INTERNAL_TOKEN_HEADER]: options.token,
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (tracing) injectTraceContext(headers);
    let response: InternalResponse;
    try {
      const answer = await pool.request({
        method: request.method,
        path: request.path,
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        // Bounded by the pool's headers and body timeouts (an AbortSignal per call costs more).
      });
      response = {
        status: answer.statusCode,
        headers: answer.headers,
        body: Buffer.from(await answer.body.arrayBuffer()),
      };
    } catch (error) {
      if (isTimeout(error))
        throw dependencyUnavailable(options.service, 'did not answer in time', error);
      throw new ConnectionFailure(`${options.service} unreachable`, { cause: error });
    }
    if (options.retryServerErrors && request.retry && response.status >= 500) {
      throw new ServerFailure(response);
    }
    return response;
  };

  const call = async (request: InternalRequest): Promise<InternalResponse> => {
    try {
      return await pRetry(() => attempt(request), {
        retries: request.retry ? (options.attempts ?? 2) - 1 : 0,
        minTimeout: options.minRetryDelayMs ?? 50,
        factor: 2,
        randomize: true,
        shouldRetry: ({ error }) =>
          error instanceof ConnectionFailure || error instanceof ServerFailure,
      });
    } catch (error) {
      if (error instanceof ServerFailure) return error.response;
      if (error instanceof ConnectionFailure)
        throw dependencyUnavailable(options.service, 'is unreachable', error);
      throw error;
    }
  };
  // While tracing is on, a CLIENT span per call (its retries included), parent of the callee's.
  const traced = (request: InternalRequest): Promise<InternalResponse> =>
    withSpan(
      `${request.method} ${options.service}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': request.method,
          'server.address': options.service,
          'url.path': pathOf(request.path),
        },
      },
      async (span) => {
        const response = await call(request);
        span.setAttribute('http.response.status_code', response.status);
        if (response.status >= 500) markSpanFailed(span, String(response.status));
        return response;
      },
    );
  return Object.assign(tracing ? traced : call, { close: () => pool.close() });
}

function isTimeout(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return (
    name === 'TimeoutError' ||
    name === 'AbortError' ||
    (typeof code === 'string' && TIMEOUT_CODES.has(code))
  );
}

/**
 * 503 `service_unavailable` naming the dependency, retried after a second: what a caller answers
 * when another gateway service (or its database, ADR 0070) cannot be reached in time.
 */
export function dependencyUnavailable(service: string, what: string, cause: unknown): GatewayError {
  return new GatewayError('service_unavailable', `A gateway dependency ${what}; retry shortly`, {
    details: { retryAfterS: 1, dependency: service },
    cause,
  });
}

/** The JSON of an answer (`{}` for an empty one). */
export function jsonOf<T>(response: InternalResponse): T {
  if (response.body.length === 0) return {} as T;
  return JSON.parse(response.body.toString('utf8')) as T;
}

/** A header of an answer as one string (the first value of a repeated header). */
export function headerOf(response: InternalResponse, name: string): string | undefined {
  const value = response.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Service-to-service credentials. Each calling service has its own token, so a service answers
 * only what that caller needs (least privilege): a compromised inference worker holding its
 * token cannot reach billing's operator functions. Tokens are compared as SHA-256 digests, in
 * constant time whatever their lengths.
 */

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Which caller presented the request's credential (set by `identifyInternalCaller`). */
export function internalCallerOf(res: Response): string {
  return (res.locals as { internalCaller: string }).internalCaller;
}

/**
 * 401 unless the request carries one of the callers' tokens; remembers which caller it was.
 * Every known token is compared, so the time taken does not tell which one nearly matched.
 */
export function identifyInternalCaller(tokensByCaller: Record<string, string>): RequestHandler {
  const callerOf = internalCallerMatcher(tokensByCaller);
  return (req, res, next) => {
    const caller = callerOf(req.headers[INTERNAL_TOKEN_HEADER]);
    if (caller === undefined) {
      next(new GatewayError('unauthorized', 'A valid internal service credential is required'));
      return;
    }
    (res.locals as { internalCaller: string }).internalCaller = caller;
    next();
  };
}

/**
 * The caller whose token was presented (the `x-internal-token` header's value), or undefined:
 * for a route served outside Express (the worker's direct jobs). Every token is compared, as
 * digests, in constant time.
 */
export function internalCallerMatcher(
  tokensByCaller: Record<string, string>,
): (presented: string | string[] | undefined) => string | undefined {
  const expected = Object.entries(tokensByCaller).map(([caller, token]) => ({
    caller,
    digest: digest(token),
  }));
  return (presented) => {
    const presentedDigest = digest(typeof presented === 'string' ? presented : '');
    let caller: string | undefined;
    for (const entry of expected) {
      if (timingSafeEqual(presentedDigest, entry.digest) && typeof presented === 'string') {
        caller = entry.caller;
      }
    }
    return caller;
  };
}

/** 403 for a caller outside `callers` (after `identifyInternalCaller`). */
export function allowInternalCallers(...callers: string[]): RequestHandler {
  return (_req, res, next) => {
    if (callers.includes(internalCallerOf(res))) {
      next();
      return;
    }
    next(new GatewayError('forbidden', 'This service credential may not call this operation'));
  };
}
