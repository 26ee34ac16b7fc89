import type { Express } from 'express';
import { dashboardAdminRoutes, dashboardRoutes } from '../dashboard/routes.js';
import { adminRoutes } from './admin-routes.js';
import { adminAlertRoutes } from './alert-routes.js';
import { adminBudgetRoutes, keyInfoRoutes } from './budget-routes.js';
import { adminKeyLimitRoutes } from './key-limit-routes.js';
import { nodeHealthAdminRoutes, nodeHealthReportRoutes } from '../nodes/index.js';
import { rateLimitHeadersOnError } from './error-answers.js';
import { idempotencyRoutes } from './idempotency-routes.js';
import { allowInternalCallers, identifyInternalCaller, jsonBodyParser } from '@gateway/runtime';
import { internalRoutes, type BillingServices } from './internal-routes.js';
import { accountUsageRoutes, adminUsageRoutes } from '../usage/index.js';
import { accountReceiptRoutes, adminReceiptRoutes } from '../receipts/index.js';
import { responseRoutes } from '../responses/index.js';
import { adminReportRoutes } from '../reports/index.js';

// Internal calls carry small JSON bodies; a statement or catalog entry is far below this.
const JSON_BODY_LIMIT_BYTES = 256 * 1024;
// A stored response replayed for an Idempotency-Key (e.g. embeddings) can be a few MiB.
const IDEMPOTENCY_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** Each calling service's own credential on billing's internal API. */
export interface BillingCallerTokens {
  edge: string;
  worker: string;
}

/**
 * Mounts billing's internal API (and the operator API behind it) on the service app. It builds
 * no service: `service.ts` composes them all (tests: `createTestBillingServices`).
 */
export function mountBillingApi(
  app: Express,
  services: BillingServices,
  tokens: BillingCallerTokens,
): void {
  const { dashboard, nodeHealth, usage } = services;
  const edgeOnly = allowInternalCallers('edge');
  app.use('/internal/v1', identifyInternalCaller({ edge: tokens.edge, worker: tokens.worker }));
  // The routes of `BILLING_ROUTES` (packages/contracts) are mounted here with their paths under
  // `/internal/v1`, each behind the credentials its `caller` names; those with a body limit of
  // their own come before the internal API's parser.
  app.use(
    '/internal/v1',
    idempotencyRoutes(services.requestIdempotency, IDEMPOTENCY_BODY_LIMIT_BYTES),
  );
  // Stored Responses state: edge's alone, with body limits of its own (a stored response is large).
  app.use('/internal/v1', responseRoutes(services.responses));
  app.use('/internal/v1', ...jsonBodyParser({ limitBytes: JSON_BODY_LIMIT_BYTES }));
  // Usage: edge's alone, like the operator API below.
  app.use('/internal/v1/admin', edgeOnly, adminUsageRoutes(usage, services.identity));
  app.use('/internal/v1', accountUsageRoutes(usage));
  // Receipts: edge's alone, for one account or for operators.
  app.use('/internal/v1/admin', edgeOnly, adminReceiptRoutes(services.receipts, services.identity));
  app.use('/internal/v1', accountReceiptRoutes(services.receipts));
  // Node health: the worker reports, operators (through edge) read.
  app.use('/internal/v1', nodeHealthReportRoutes(nodeHealth));
  app.use('/internal/v1/admin', edgeOnly, nodeHealthAdminRoutes(nodeHealth));
  // The operator API is edge's alone: the worker's credential cannot grant credits.
  app.use(
    '/internal/v1/admin',
    edgeOnly,
    dashboardAdminRoutes(services, dashboard),
    adminRoutes(services),
  );
  app.use('/internal/v1/admin', edgeOnly, adminBudgetRoutes(services));
  app.use('/internal/v1/admin', edgeOnly, adminKeyLimitRoutes(services));
  app.use('/internal/v1/admin', edgeOnly, adminAlertRoutes(services));
  // Finance's period report (the month-end close).
  app.use('/internal/v1/admin', edgeOnly, adminReportRoutes(services.reports, services.periods));
  app.use('/internal/v1', keyInfoRoutes(services));
  app.use('/internal/v1/dashboard', edgeOnly, dashboardRoutes(services, dashboard));
  app.use('/internal/v1', internalRoutes(services));
  app.use('/internal/v1', rateLimitHeadersOnError);
}
