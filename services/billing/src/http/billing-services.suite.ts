import { Keyring } from '@gateway/crypto';
import { randomBytes } from 'node:crypto';
import { BudgetRepository } from '../budgets/budget-repository.js';
import { Budgets } from '../budgets/budgets.js';
import { AlertSettings } from '../alerts/alert-settings.js';
import { AlertRepository } from '../alerts/alert-repository.js';
import { Receipts, ReceiptRepository } from '../receipts/index.js';
import { ResponseRepository, StoredResponses } from '../responses/index.js';
import { createReports } from '../reports/index.js';
import { pgPoolOf, type PrismaClient } from '../db/client.js';
import { createDashboard, type DashboardOptions } from '../dashboard/index.js';
import { createIdentity } from '../identity/index.js';
import { createLedgerService, type LedgerServiceDeps } from '../ledger/index.js';
import { createNodeHealthService } from '../nodes/index.js';
import { createUsageService, UsageStore } from '../usage/index.js';
import type { BillingServices } from './internal-routes.js';
import { RequestIdempotency } from './request-idempotency.js';

/** What a test may vary; everything else takes production's defaults. */
export interface TestBillingServicesOptions {
  /** A fresh random MASTER_KEY keyring by default. */
  keyring?: Keyring;
  clock?: () => Date;
  /** 0: ledger entries are listed as soon as committed (default: after a safety delay). */
  entriesStableAfterMs?: LedgerServiceDeps['entriesStableAfterMs'];
  /** The dashboard's clock and timings (e.g. to end sessions on cue). */
  dashboard?: Omit<DashboardOptions, 'prisma'>;
}

/**
 * Every service `mountBillingApi` serves, over one Prisma client, for tests that run billing in
 * process. Production wires the same services in `service.ts` (from its configuration); this is
 * the tests' explicit counterpart, so the API never builds a service of its own.
 */
export function createTestBillingServices(
  prisma: PrismaClient,
  options: TestBillingServicesOptions = {},
): BillingServices {
  const clock = options.clock ?? (() => new Date());
  const identity = createIdentity({
    prisma,
    keyring: options.keyring ?? Keyring.parse(randomBytes(32).toString('base64')),
    clock,
  });
  const ledger = createLedgerService({
    prisma,
    clock,
    ...(options.entriesStableAfterMs === undefined
      ? {}
      : { entriesStableAfterMs: options.entriesStableAfterMs }),
  });
  const { reports, periods } = createReports(pgPoolOf(prisma), 'Africa/Algiers', clock);
  return {
    identity,
    ledger,
    requestIdempotency: new RequestIdempotency({
      run: (work) => identity.store.transaction(work),
      clock,
      keyring: identity.keyring,
    }),
    dashboard: createDashboard({ prisma, ...options.dashboard }),
    usage: createUsageService({
      store: new UsageStore(pgPoolOf(prisma)),
      clock,
      retentionDays: 400,
    }),
    nodeHealth: createNodeHealthService(pgPoolOf(prisma), identity.catalog, clock),
    budgets: new Budgets(new BudgetRepository(pgPoolOf(prisma)), clock),
    alerts: new AlertSettings(new AlertRepository(pgPoolOf(prisma)), identity.keyring),
    receipts: new Receipts(new ReceiptRepository(pgPoolOf(prisma))),
    responses: new StoredResponses({
      store: new ResponseRepository(pgPoolOf(prisma)),
      keyring: identity.keyring,
      clock,
      retentionDays: 30,
    }),
    reports,
    periods,
  };
}
