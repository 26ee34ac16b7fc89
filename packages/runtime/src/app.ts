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
