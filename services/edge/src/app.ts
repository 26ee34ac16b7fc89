import type { Express, RequestHandler } from 'express';
import { GatewayError, PUBLIC_API_PREFIX, PUBLIC_ROUTES } from '@gateway/contracts';
import { sampledGauge, type Logger, type ServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp, type ReadinessCheck } from '@gateway/runtime';
import { adminRouter } from './admin/admin-router.js';
import { dashboardRouter } from './dashboard/dashboard-router.js';
import { DASHBOARD_PATH, dashboardSite } from './dashboard/dashboard-site.js';
import type { ConsoleDeps, EdgeDeps, InferenceDeps } from './deps.js';
import { authenticate } from './http/auth.js';
import {
  DEFAULT_BODY_BYTES_MAX,
  DEFAULT_REQUESTS_MAX,
  requestsInProgress,
} from './http/requests-in-progress.js';
import { methodNotAllowed, rateLimitOnErrors } from './http/errors.js';
import { buildOpenApiDocument } from './openapi/openapi.js';
import { accountRouter } from './routes/account.js';
import { chatCompletionsRouter } from './routes/chat-completions.js';
import { keyRouter } from './routes/key.js';
import { mediaRouter } from './routes/media.js';
import { nativeInferenceRouter } from './routes/native-inference.js';
import { scopedJwtRouter } from './routes/scoped-jwt.js';
import { transcriptionsRouter } from './routes/transcriptions.js';
import { usageRouter } from './routes/usage.js';
import { receiptsRouter } from './routes/receipts.js';
import { createResponsesRouter, storedResponsesRouter } from './responses/responses-router.js';
import { EDGE_SURFACES, type EdgeSurface } from './surfaces.js';

export interface EdgeAppOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  readiness: readonly ReadinessCheck[];
  isShuttingDown: () => boolean;
  /** The public API needs the job path too (`InferenceDeps`); the others do not. */
  deps: ConsoleDeps & Partial<InferenceDeps>;
  /** What this process serves (`EDGE_SURFACES`); all three when omitted. */
  surfaces?: ReadonlySet<EdgeSurface>;
  /** The built dashboard to serve at /dashboard/ (null: not served). */
  dashboardDir?: string | null;
  /**
   * `TRUSTED_PROXIES`: the reverse proxies (addresses, CIDR ranges) whose `X-Forwarded-For`
   * names the client (`req.ip`, the address failed authentications count against) and whose
   * `X-Forwarded-Proto`/`-Host` are believed. None by default: the client is the peer.
   */
  trustedProxies?: readonly string[];
}

/** `TRUSTED_PROXIES` as a list (its format is checked when the configuration loads). */
export function trustedProxies(setting: string): string[] {
  return setting
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * Edge's HTTP app: ops endpoints and request ids (runtime), then the surfaces this process
 * serves: the operator API behind the admin token, the dashboard, the public API. Every failure,
 * unknown routes (and surfaces served elsewhere) included, leaves through the runtime's one error
 * handler in the one error shape.
 */
export function buildEdgeApp(options: EdgeAppOptions): Express {
  const { deps } = options;
  const surfaces = options.surfaces ?? new Set(EDGE_SURFACES);
  const app = createServiceApp(options);
  // Express (proxy-addr) walks X-Forwarded-For from the right and stops at the first address
  // that is not a trusted proxy: a client cannot choose its own address through the header.
  const proxies = options.trustedProxies ?? [];
  app.set('trust proxy', proxies.length > 0 ? [...proxies] : false);
  if (surfaces.has('admin')) app.use('/admin/v1', adminRouter(deps));
  if (surfaces.has('dashboard')) {
    app.use('/dashboard/api', dashboardRouter(deps));
    if (options.dashboardDir) app.use(DASHBOARD_PATH, dashboardSite(options.dashboardDir));
  }
  if (surfaces.has('api')) {
    const { jobs, idempotency, background } = deps;
    if (!jobs || !idempotency || !background) {
      throw new Error('the public API needs the job path (jobs)');
    }
    mountPublicApi(app, { ...deps, jobs, idempotency, background }, options.metrics);
  }
  app.use(noSuchRoute);
  if (surfaces.has('api'))
    app.use(PUBLIC_API_PREFIX, rateLimitOnErrors(deps.billing, deps.authFailures));
  return finishApp(app, options.logger);
}

/** `/v1`: the public document, inference routes (authenticated with their admission), the rest. */
function mountPublicApi(app: Express, deps: EdgeDeps, metrics: ServiceMetrics): void {
  // First: a request past the limits is refused before anything is read or held.
  const inProgress = requestsInProgress({
    requestsMax: deps.limits.requestsInProgress ?? DEFAULT_REQUESTS_MAX,
    bodyBytesMax: deps.limits.bodyBytesInProgress ?? DEFAULT_BODY_BYTES_MAX,
    largestBodyBytes: Math.max(deps.limits.jsonBodyBytes, deps.limits.uploadBytes),
  });
  app.use(PUBLIC_API_PREFIX, inProgress.handler);
  sampledGauge(
    metrics.registry,
    'edge_public_requests_in_progress',
    'Public API requests this process is serving (PUBLIC_REQUESTS_MAX bounds them)',
    inProgress.requests,
  );
  const openApi = JSON.stringify(buildOpenApiDocument());
  const documentPath = `${PUBLIC_API_PREFIX}${PUBLIC_ROUTES.openApi.path}`;
  app.get(documentPath, (_req, res) => {
    res.type('application/json').send(openApi);
  });
  app.all(documentPath, methodNotAllowed(['GET']));
  app.use(PUBLIC_API_PREFIX, deps.authFailures.guard);
  // Inference routes: billing authenticates with the admission (one call before the job).
  for (const router of [
    chatCompletionsRouter,
    createResponsesRouter,
    nativeInferenceRouter,
    mediaRouter,
    transcriptionsRouter,
  ]) {
    app.use(PUBLIC_API_PREFIX, router(deps));
  }
  // `GET /v1/key`: billing checks the credential without counting the request.
  app.use(PUBLIC_API_PREFIX, keyRouter(deps));
  // Every other /v1 route: authenticate (and count) first.
  app.use(PUBLIC_API_PREFIX, authenticate(deps.billing, deps.authFailures));
  for (const router of [
    scopedJwtRouter,
    accountRouter,
    usageRouter,
    receiptsRouter,
    storedResponsesRouter,
  ]) {
    app.use(PUBLIC_API_PREFIX, router(deps));
  }
}

const noSuchRoute: RequestHandler = (req, _res, next) => {
  next(
    new GatewayError('not_found', `No route for ${req.method} ${req.originalUrl.split('?')[0]}`),
  );
};
