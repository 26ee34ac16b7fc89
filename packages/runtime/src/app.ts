import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger, ServiceMetrics } from '@gateway/observability';
import { errorHandler, notFoundHandler } from './errors.js';
import { opsRoutes, type ReadinessCheck } from './ops-routes.js';
import { httpMetrics, requestId } from './request-context.js';

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
export function pathOf(url: string | undefined): string {
  const target = url ?? '';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}
