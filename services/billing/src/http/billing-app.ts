import express, { type Express } from 'express';
import { adminRoutes } from './admin-routes.js';
import { requireInternalToken } from './internal-auth.js';
import { internalRoutes, type BillingServices } from './internal-routes.js';

// Internal calls carry small JSON bodies; a statement or catalog entry is far below this.
const JSON_BODY_LIMIT = '256kb';

/** Mounts billing's internal API (and the operator API behind it) on the service app. */
export function mountBillingApi(
  app: Express,
  services: BillingServices,
  internalToken: string,
): void {
  app.use(
    '/internal/v1',
    requireInternalToken(internalToken),
    express.json({ limit: JSON_BODY_LIMIT }),
  );
  app.use('/internal/v1/admin', adminRoutes(services));
  app.use('/internal/v1', internalRoutes(services));
}
