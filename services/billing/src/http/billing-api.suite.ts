import { Keyring } from '@gateway/crypto';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from '@jest/globals';
import request from 'supertest';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp } from '@gateway/runtime';
import { createTestDatabase } from '@gateway/testing';
import { billingDatabaseTemplate, createPrismaClient, pgPoolOf } from '../db/client.js';
import { createIdentity } from '../identity/index.js';
import { createLedgerService, type LedgerServiceDeps } from '../ledger/index.js';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import { createUsageService, UsageStore } from '../usage/index.js';
import { mountBillingApi } from './billing-app.js';

const silent = new Writable({ write: (_c, _e, cb) => cb() });

export type ApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Billing's HTTP API over its own throwaway database, driven by supertest. */
export interface BillingApiUnderTest {
  api: ReturnType<typeof request>;
  internalToken: string;
  workerToken: string;
  /** A request to `/internal/v1<path>` with edge's credential (the worker's with `as`). */
  call(method: ApiMethod, path: string, as?: 'edge' | 'worker'): request.Test;
  /** Asserts the ledger's invariants hold, then drops the database. */
  close(): Promise<void>;
}

export async function startBillingApi(
  ledgerOptions: Partial<Pick<LedgerServiceDeps, 'entriesStableAfterMs'>> = {},
): Promise<BillingApiUnderTest> {
  const db = await createTestDatabase(billingDatabaseTemplate);
  const prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 5 });
  const clock = () => new Date();
  const identity = createIdentity({
    prisma,
    keyring: Keyring.parse(randomBytes(32).toString('base64')),
    clock,
  });
  const ledger = createLedgerService({ prisma, clock, holdTtlMs: 60_000, ...ledgerOptions });
  const logger = createLogger({ service: 'billing', destination: silent });
  const app = createServiceApp({
    logger,
    metrics: createServiceMetrics('billing', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
  });
  const internalToken = randomBytes(32).toString('hex');
  const workerToken = randomBytes(32).toString('hex');
  const usage = createUsageService({
    store: new UsageStore(pgPoolOf(prisma)),
    clock,
    retentionDays: 400,
  });
  mountBillingApi(app, { identity, ledger, usage }, { edge: internalToken, worker: workerToken });
  finishApp(app, logger);
  const api = request(app);
  return {
    api,
    internalToken,
    workerToken,
    call: (method, path, as = 'edge') =>
      api[method](`/internal/v1${path}`).set(
        INTERNAL_TOKEN_HEADER,
        as === 'worker' ? workerToken : internalToken,
      ),
    close: async () => {
      try {
        expect(await ledger.checkInvariants()).toEqual({ ok: true, violations: [] });
      } finally {
        await prisma.$disconnect();
        await db.drop();
      }
    },
  };
}
