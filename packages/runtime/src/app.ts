/*
 * How every service's Express app takes a request: the shell it starts from (the request id,
 * kept across services and current for everything a request does; the access log; the latency
 * histogram; the ops endpoints; the one error shape) and bounded, checked JSON bodies.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { GatewayError } from '@gateway/contracts';
import {
  traceHttpRequests,
  tracingEnabled,
  type Logger,
  type ServiceMetrics,
} from '@gateway/observability';
import { answerBeforeBodyAndClose, errorHandler, notFoundHandler } from './errors.js';
import { opsRoutes, type ReadinessCheck } from './ops-routes.js';

export interface ServiceAppOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  readiness: readonly ReadinessCheck[];
  isShuttingDown: () => boolean;
  /**
   * `every request` (default): one info line per request. `failures`: 4xx at warn, 5xx at
   * error, successes at debug — for internal APIs called several times per public request,
   * where edge's access line (same request id) already records the request and a line per
   * internal call costs a write syscall each (about 8 % of billing's CPU in `pnpm bench`).
   */
  accessLog?: 'every request' | 'failures';
}

const OPS_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The Express app every service starts from: request ids, one access-log line per request
 * (probes excluded), the latency histogram and the ops endpoints. Services mount their
 * routes and then call `finishApp`.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(requestId());
  // A server span per request while tracing is on (docs/deployment.md, "Traces"); not even the
  // middleware while it is off.
  if (tracingEnabled()) app.use(tracedRequests());
  app.use(
    pinoHttp({
      logger: options.logger,
      genReqId: (req) => (req as { id?: string }).id ?? 'unknown',
      autoLogging: { ignore: (req) => OPS_PATHS.has(req.url ?? '') },
      customLogLevel: options.accessLog === 'failures' ? failuresOnly : undefined,
      // Only the method, path and status: bodies, headers and query strings may carry prompts
      // and credentials (`GET /v1/scoped-jwt?jwt=<token>`), so none of them is logged.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: pathOf(req.url),
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(httpMetrics(options.metrics));
  app.use(
    opsRoutes({
      registry: options.metrics.registry,
      checks: options.readiness,
      isShuttingDown: options.isShuttingDown,
    }),
  );
  return app;
}

function failuresOnly(
  _req: IncomingMessage,
  res: ServerResponse,
  error?: Error,
): 'debug' | 'warn' | 'error' {
  if (error || res.statusCode >= 500) return 'error';
  return res.statusCode >= 400 ? 'warn' : 'debug';
}

/** Unknown routes and every thrown error leave in the one documented error shape. */
export function finishApp(app: Express, logger: Logger): Express {
  app.use(notFoundHandler());
  app.use(errorHandler(logger));
  return app;
}

/** The path of a request target, without its query string. */
/** The request's logger (pino-http's child, with the request id), for a route that logs. */
export function requestLogger(req: IncomingMessage): Logger {
  return req.log;
}

export function pathOf(url: string | undefined): string {
  const target = url ?? '';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

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

/** Runs `fn` outside any request: for work done on behalf of many (a batch call). */
export function withoutRequestId<T>(fn: () => T): T {
  return scope.exit(fn);
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

/** The matched route's template (`/v1/inference/:model`), never the raw path with its ids. */
function routeTemplate(req: express.Request): string | undefined {
  return req.route ? `${req.baseUrl}${String(req.route.path)}` : undefined;
}

/** Observes every response in the service's `*_http_request_duration_seconds` histogram. */
export const httpMetrics =
  (metrics: ServiceMetrics): RequestHandler =>
  (req, res, next) => {
    const stop = metrics.httpRequestDurationSeconds.startTimer();
    res.once('finish', () => {
      // Label by route template, never the raw path: ids in paths would explode cardinality.
      const route = routeTemplate(req) ?? 'unmatched';
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };

/** Server spans for every request but the probes and scrapes. */
function tracedRequests(): RequestHandler {
  const trace = traceHttpRequests((req) => ({
    route: routeTemplate(req as express.Request),
    requestId: (req as { id?: string }).id,
  }));
  return (req, res, next) => (OPS_PATHS.has(req.path) ? next() : trace(req, res, () => next()));
}

/**
 * JSON bodies for every service: body-parser bounded by `limitBytes`, then checks that keep a
 * hostile body from turning into a 500 further down. The bytes must be valid UTF-8 (body-parser
 * would silently replace bad bytes); nesting is bounded (a 10 KB body nested 5,000 levels deep
 * was admitted, then could not be serialised); and no string, key or value, may hold a NUL or an
 * unpaired surrogate, which PostgreSQL refuses and UTF-8 cannot carry.
 */

/** Deeper than any real request (tool schemas nest a dozen levels), shallow enough to walk. */
export const JSON_MAX_DEPTH = 64;

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function refuse(message: string): never {
  throw new GatewayError('invalid_request_body', message);
}

function checkString(value: string): void {
  if (NUL.test(value)) refuse('Strings must not contain the NUL character');
  if (UNPAIRED_SURROGATE.test(value)) refuse('Strings must not contain unpaired UTF-16 surrogates');
}

/** Walks a parsed JSON value, refusing what the services cannot carry. */
export function checkJsonValue(value: unknown, depth = 0): void {
  if (typeof value === 'string') {
    checkString(value);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= JSON_MAX_DEPTH) refuse(`JSON is nested deeper than ${JSON_MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const item of value) checkJsonValue(item, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    checkString(key);
    checkJsonValue(item, depth + 1);
  }
}

/** A body that sends nothing for this long is cut (a stalled client must not hold a socket). */
export const BODY_IDLE_TIMEOUT_MS = 10_000;

/**
 * While the request body is read, a pause of more than `idleMs` answers 408 in the error shape
 * and closes the connection. Set just before a body is read, so time spent authenticating
 * before it does not count.
 */
export function bodyIdleTimeout(idleMs = BODY_IDLE_TIMEOUT_MS): RequestHandler {
  return (req, res, next) => {
    if (req.complete) {
      next();
      return;
    }
    req.setTimeout(idleMs, () => {
      if (!res.headersSent) {
        answerBeforeBodyAndClose(
          res,
          new GatewayError('request_timeout', 'The request body stopped arriving'),
        );
      }
      req.socket.destroySoon();
    });
    // Once the body is in, the wait for the answer is not bounded by this timer.
    req.once('end', () => req.setTimeout(0));
    next();
  };
}

export interface JsonBodyOptions {
  limitBytes: number;
  /** Media types parsed as JSON (body-parser's `type`); `application/json` by default. */
  type?: string | string[];
}

/** The parser and its checks, in order. */
export function jsonBodyParser(options: JsonBodyOptions): RequestHandler[] {
  const parse = express.json({
    limit: options.limitBytes,
    type: options.type ?? 'application/json',
    // A plain error: body-parser reports it as `entity.verify.failed`, which errors.ts maps.
    verify: (_req, _res, buffer) => {
      if (!isUtf8(buffer)) throw new Error('invalid UTF-8');
    },
  });
  const check: RequestHandler = (req, _res, next) => {
    checkJsonValue(req.body);
    next();
  };
  return [bodyIdleTimeout(), parse, check];
}
