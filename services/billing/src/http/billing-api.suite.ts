import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from '@jest/globals';
import request from 'supertest';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp } from '@gateway/runtime';
import { createTestDatabase, type OperatorCall } from '@gateway/testing';
import { billingDatabaseTemplate, createPrismaClient } from '../db/client.js';
import type { LedgerServiceDeps } from '../ledger/index.js';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import { mountBillingApi } from './billing-app.js';
import {
  createTestBillingServices,
  type TestBillingServicesOptions,
} from './billing-services.suite.js';
import type { RequestHandler } from 'express';

const silent = new Writable({ write: (_c, _e, cb) => cb() });

export type ApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Billing's HTTP API over its own throwaway database, driven by supertest. */
export interface BillingApiUnderTest {
  api: ReturnType<typeof request>;
  internalToken: string;
  workerToken: string;
  /** The database as its owner: for arranging what no service may (e.g. backdating entries). */
  ownerUrl: string;
  /** A request to `/internal/v1<path>` with edge's credential (the worker's with `as`). */
  call(method: ApiMethod, path: string, as?: 'edge' | 'worker'): request.Test;
  /** Billing's operator API (`fundAccount(billing.operator)`). */
  operator: OperatorCall;
  /** Asserts the ledger's invariants hold, then drops the database. */
  close(): Promise<void>;
}

/** How a test harness builds billing's app. */
export interface TestBillingAppOptions extends TestBillingServicesOptions {
  maxConnections: number;
  /** Runs ahead of billing's routes (a recorder, a fault hook). */
  before?: RequestHandler;
}

/**
 * Billing's app as production mounts it (`mountBillingApi`), over a throwaway database of its
 * own, with a fresh credential for edge and one for the worker: what both test harnesses serve
 * (`startBillingApi` through supertest, `startBilling` on a loopback port).
 */
export async function createTestBillingApp(options: TestBillingAppOptions) {
  const { maxConnections, before, ...serviceOptions } = options;
  const db = await createTestDatabase(billingDatabaseTemplate);
  const prisma = createPrismaClient(db.runtimeUrl, { maxConnections });
  const services = createTestBillingServices(prisma, serviceOptions);
  const logger = createLogger({ service: 'billing', destination: silent });
  const app = createServiceApp({
    logger,
    metrics: createServiceMetrics('billing', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
  });
  const internalToken = randomBytes(32).toString('hex');
  const workerToken = randomBytes(32).toString('hex');
  if (before) app.use(before);
  mountBillingApi(app, services, { edge: internalToken, worker: workerToken });
  finishApp(app, logger);
  return { db, prisma, services, app, internalToken, workerToken };
}

export async function startBillingApi(
  ledgerOptions: Partial<Pick<LedgerServiceDeps, 'entriesStableAfterMs'>> = {},
): Promise<BillingApiUnderTest> {
  const built = await createTestBillingApp({ maxConnections: 5, ...ledgerOptions });
  const { db, prisma, services, internalToken, workerToken } = built;
  const api = request(built.app);
  return {
    api,
    internalToken,
    workerToken,
    ownerUrl: db.url,
    operator: async <T>(
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ): Promise<T> => {
      const verb = method.toLowerCase() as ApiMethod;
      const answer = await api[verb](`/internal/v1/admin${path}`)
        .set(INTERNAL_TOKEN_HEADER, internalToken)
        .set(headers)
        .send(body as object);
      if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status}`);
      return answer.body as T;
    },
    call: (method, path, as = 'edge') =>
      api[method](`/internal/v1${path}`).set(
        INTERNAL_TOKEN_HEADER,
        as === 'worker' ? workerToken : internalToken,
      ),
    close: async () => {
      try {
        expect(await services.ledger.checkInvariants()).toEqual({ ok: true, violations: [] });
      } finally {
        await prisma.$disconnect();
        await db.drop();
      }
    },
  };
}

/** A chat model (`acme/<upstream>`) served by `nodes`; one node that answers nobody by default. */
export interface ChatModelSetup {
  id: string;
  inputPriceDzdPerM: number;
  outputPriceDzdPerM: number;
  maxOutputTokens: number;
  nodes?: string[];
}

/** PUTs the model into the catalog through the operator API; its upstream name is the id's last part. */
export function putChatModel(billing: BillingApiUnderTest, model: ChatModelSetup): request.Test {
  return billing.call('put', `/admin/models/${model.id}`).send({
    kind: 'chat',
    provider: 'node',
    upstream_model: model.id.slice(model.id.lastIndexOf('/') + 1),
    input_price_dzd_per_m: model.inputPriceDzdPerM,
    output_price_dzd_per_m: model.outputPriceDzdPerM,
    max_output_tokens: model.maxOutputTokens,
    nodes: (model.nodes ?? ['http://127.0.0.1:9']).map((url) => ({ url })),
  });
}
