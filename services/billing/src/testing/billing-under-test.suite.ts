import { randomBytes, randomUUID } from 'node:crypto';
import { silentStream } from './silent-log.suite.js';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp, listen, type RunningServer } from '@gateway/runtime';
import { createTestDatabase, type OperatorCall } from '@gateway/testing';
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
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T>;
  /** Billing's operator API (`fundAccount(billing.operator)`). */
  operator: OperatorCall;
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
  const call = billingCaller(url, internalToken, workerToken);
  return {
    url,
    databaseUrl: db.url,
    internalToken,
    workerToken,
    ledger,
    paths,
    call,
    operator: adminOperator(call),
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

export async function balanceOf(billing: BillingUnderTest, accountId: string) {
  return billing.call<{ balance_dzd: number; reserved_dzd: number; available_dzd: number }>(
    'GET',
    `/accounts/${accountId}/balance`,
  );
}

/**
 * Calls billing's internal API as edge (as the worker for the worker's routes), each call under
 * a fresh Idempotency-Key unless `headers` name one; resolves with the JSON answer (`{}` when
 * empty), throws on an error status.
 */
export function billingCaller(url: string, internalToken: string, workerToken: string) {
  return async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> => {
    const response = await fetch(`${url}/internal/v1${path}`, {
      method,
      headers: {
        'X-Internal-Token': isWorkerCall(path) ? workerToken : internalToken,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`billing ${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  };
}

/** Billing's operator API (`/admin` on its internal API) through `call`, for `fundAccount`. */
export function adminOperator(call: ReturnType<typeof billingCaller>): OperatorCall {
  return (method, path, body, headers) => call(method, `/admin${path}`, body, headers);
}

/** Settling is the worker's call alone: a test arranging a settlement calls as the worker. */
export const isWorkerCall = (path: string): boolean => /^\/holds\/[^/]+\/settle$/.test(path);
