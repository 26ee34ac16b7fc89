import { randomBytes } from 'node:crypto';
import { silentStream } from './silent-log.suite.js';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp, listen, type RunningServer } from '@gateway/runtime';
import { createTestDatabase } from '@gateway/testing';
// Tests only: the real billing, in-process, over its own database (no stand-in for money).
import {
  billingDatabaseTemplate,
  createPrismaClient,
  type PrismaClient,
} from '../../../billing/src/db/client.js';
import { mountBillingApi } from '../../../billing/src/http/billing-app.js';
import { createTestBillingServices } from '../../../billing/src/http/billing-services.suite.js';
import type { DashboardOptions } from '../../../billing/src/dashboard/index.js';
import type { LedgerService } from '../../../billing/src/ledger/index.js';

/** Billing running in this process on a loopback port, as edge reaches it in production. */
export interface BillingUnderTest {
  url: string;
  databaseUrl: string;
  /** Edge's credential on billing; `workerToken` is the worker's. */
  internalToken: string;
  workerToken: string;
  ledger: LedgerService;
  /** The path of every internal call billing received so far (its access log, in short). */
  paths: string[];
  /** Calls billing's internal API directly (arranging a test; edge is not involved). */
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export interface BillingTestOptions {
  /** The dashboard's clock and timings (e.g. to end sessions on cue). */
  dashboard?: Omit<DashboardOptions, 'prisma'>;
  /** 0: ledger entries are listed as soon as committed (default: after a safety delay). */
  entriesStableAfterMs?: number;
}

export async function startBilling(options: BillingTestOptions = {}): Promise<BillingUnderTest> {
  const db = await createTestDatabase(billingDatabaseTemplate);
  const prisma: PrismaClient = createPrismaClient(db.runtimeUrl, { maxConnections: 8 });
  const internalToken = randomBytes(32).toString('hex');
  const workerToken = randomBytes(32).toString('hex');
  const services = createTestBillingServices(prisma, options);
  const { ledger } = services;
  const logger = createLogger({ service: 'billing', destination: silentStream });
  const app = createServiceApp({
    logger,
    metrics: createServiceMetrics('billing', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
  });
  const paths: string[] = [];
  app.use((req, _res, next) => {
    paths.push(req.path);
    next();
  });
  mountBillingApi(app, services, { edge: internalToken, worker: workerToken });
  finishApp(app, logger);
  const server: RunningServer = await listen(app, '127.0.0.1', 0);
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    databaseUrl: db.url,
    internalToken,
    workerToken,
    ledger,
    paths,
    call: async <T>(method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}/internal/v1${path}`, {
        method,
        headers: {
          'X-Internal-Token': isWorkerCall(path) ? workerToken : internalToken,
          'Content-Type': 'application/json',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (response.status >= 400) throw new Error(`billing ${method} ${path}: ${text}`);
      return (text ? JSON.parse(text) : {}) as T;
    },
    close: async () => {
      const report = await ledger.checkInvariants();
      await server.close(1_000);
      await prisma.$disconnect();
      await db.drop();
      if (!report.ok)
        throw new Error(`ledger invariants violated: ${report.violations.join('\n')}`);
    },
  };
}

/** A model in the catalog; prices in DZD per million tokens. */
export interface ModelSpec {
  kind?: string;
  provider?: 'node' | 'external';
  inputPrice?: number;
  outputPrice?: number;
  maxOutputTokens?: number;
}

export async function putModel(billing: BillingUnderTest, id: string, spec: ModelSpec = {}) {
  await billing.call('PUT', `/admin/models/${id}`, {
    kind: spec.kind ?? 'chat',
    provider: spec.provider ?? 'node',
    upstream_model: id.split('/').pop(),
    input_price_dzd_per_m: spec.inputPrice ?? 1_000,
    output_price_dzd_per_m: spec.outputPrice ?? 2_000,
    max_output_tokens: spec.maxOutputTokens ?? 100,
  });
}

export interface Tenant {
  accountId: string;
  key: string;
}

/** An account with an API key named `auto`, credited (10 DZD by default). */
export async function createTenant(
  billing: BillingUnderTest,
  options: { creditDzd?: number; rateLimit?: number } = {},
): Promise<Tenant> {
  const account = await billing.call<{ id: string }>('POST', '/admin/accounts', { name: 't' });
  if (options.rateLimit !== undefined) {
    await billing.call('PATCH', `/admin/accounts/${account.id}`, {
      rate_limit_per_minute: options.rateLimit,
    });
  }
  const { key } = await billing.call<{ key: string }>(
    'POST',
    `/admin/accounts/${account.id}/api-keys`,
    { name: 'auto' },
  );
  const credit = options.creditDzd ?? 10;
  if (credit > 0) {
    await billing.call('POST', `/admin/accounts/${account.id}/credits`, { amount_dzd: credit });
  }
  return { accountId: account.id, key };
}

export async function balanceOf(billing: BillingUnderTest, accountId: string) {
  return billing.call<{ balance_dzd: number; reserved_dzd: number; available_dzd: number }>(
    'GET',
    `/accounts/${accountId}/balance`,
  );
}

/** Settling is the worker's call alone: a test arranging a settlement calls as the worker. */
export const isWorkerCall = (path: string): boolean => /^\/holds\/[^/]+\/settle$/.test(path);
