import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { ServiceMetrics } from '@gateway/observability';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// A caller-supplied id is kept only when it is short and harmless in logs and headers.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Reuses a sane incoming request id (so ids follow a request across services) or makes one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  const candidate = Array.isArray(incoming) ? incoming[0] : incoming;
  return candidate && ACCEPTABLE_REQUEST_ID.test(candidate) ? candidate : `req_${randomUUID()}`;
}

/**
 * The request id of the work being done (an HTTP request served, a job run for one), for calls
 * made on its behalf: internal HTTP calls send it as `X-Request-Id`, job messages carry it, so
 * one id follows a request across services in the logs.
 */
const scope = new AsyncLocalStorage<{ requestId: string }>();

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/** Runs `fn` with `id` as the current request id (none when `id` is undefined). */
export function withRequestId<T>(id: string | undefined, fn: () => T): T {
  return id === undefined ? fn() : scope.run({ requestId: id }, fn);
}

/**
 * Sets `req.id`, echoes it on every response (errors included) and makes it the current request
 * id for everything the request does.
 */
export const requestId = (): RequestHandler => (req, res, next) => {
  const id = requestIdFor(req.headers[REQUEST_ID_HEADER.toLowerCase()]);
  (req as { id?: string }).id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  scope.run({ requestId: id }, next);
};

/** Observes every response in the service's `*_http_request_duration_seconds` histogram. */
export const httpMetrics =
  (metrics: ServiceMetrics): RequestHandler =>
  (req, res, next) => {
    const stop = metrics.httpRequestDurationSeconds.startTimer();
    res.once('finish', () => {
      // Label by route template, never the raw path: ids in paths would explode cardinality.
      const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
