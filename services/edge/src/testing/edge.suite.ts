import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { holdIdOfJob } from '@gateway/contracts';
import {
  createGatewayBus,
  gatewayNames,
  type GatewayNames,
  type MessageBus,
} from '@gateway/messaging';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { testAmqpUrl, uniquePrefix } from '@gateway/testing';
import { createPostgresPool } from '@gateway/runtime';
import { buildEdgeApp } from '../app.js';
import { createDirectAdmissions } from '../billing/direct-admissions.js';
import { createBillingClient } from '@gateway/billing-client';
import { createDispatcherClient } from '../clients/dispatcher-client.js';
import type { DashboardSettings } from '../dashboard/settings.js';
import { AuthFailureLimiter, identifier } from '../http/auth.js';
import { BackgroundResponses } from '../responses/background-response.js';
import { Idempotency } from '../http/idempotency.js';
import { DeliveredAnswers } from '../jobs/delivered-answers.js';
import { HoldReleases } from '../jobs/hold-release.js';
import { InferenceJobs, JobPublisher } from '../jobs/inference-jobs.js';
import { ReplyRouter } from '../jobs/job-replies.js';
import type { BillingUnderTest } from '../../../billing/src/testing/billing-under-test.suite.js';
import { silentStream } from './silent-log.suite.js';

export interface EdgeOptions {
  prefix?: string;
  replyTimeoutMs?: number;
  dispatcherUrl?: string;
  dispatcherToken?: string;
  uploadBytes?: number;
  jsonBodyBytes?: number;
  /** `PUBLIC_REQUESTS_MAX`; the default when omitted. */
  requestsInProgress?: number;
  webhookAllowInsecure?: boolean;
  /** Failed authentications per address and minute; high by default (tests fail on purpose). */
  authFailuresPerMinute?: number;
  /** `TRUSTED_PROXIES` (none by default). */
  trustedProxies?: string[];
  dashboard?: DashboardSettings;
  /**
   * Where API keys are admitted: in billing's database as edge's role (`direct`, as every
   * shipped stack runs, ADR 0070) or over billing's API (`api`). `direct` by default.
   */
  admissions?: 'direct' | 'api';
}

/** An edge app in this process: real billing (HTTP), real RabbitMQ, supertest in front. */
export interface EdgeUnderTest {
  app: Express;
  api: ReturnType<typeof request>;
  adminToken: string;
  prefix: string;
  names: GatewayNames;
  bus: MessageBus;
  replies: ReplyRouter;
  close(): Promise<void>;
}

export async function startEdge(
  billing: BillingUnderTest,
  options: EdgeOptions = {},
): Promise<EdgeUnderTest> {
  const prefix = options.prefix ?? uniquePrefix('edge');
  const logger = createLogger({ service: 'edge', destination: silentStream });
  const bus = createGatewayBus({ AMQP_URL: testAmqpUrl(), AMQP_PREFIX: prefix }, logger);
  await bus.start();
  const directAdmissions =
    options.admissions === 'api'
      ? undefined
      : createDirectAdmissions({
          pool: createPostgresPool(billing.admissionUrl, 4, {
            timeoutMs: 5_000,
            clientTimeout: true,
          }),
          holdTtlMs: 15 * 60_000,
          logger,
        });
  const billingClient = createBillingClient({
    baseUrl: billing.url,
    token: billing.internalToken,
    timeoutMs: 5_000,
    ...(directAdmissions ? { directAdmissions } : {}),
  });
  // The dashboard's own connections to billing, as edge's service wires them.
  const dashboardBilling = createBillingClient({
    baseUrl: billing.url,
    token: billing.internalToken,
    timeoutMs: 5_000,
    connections: 4,
  });
  const delivered = new DeliveredAnswers({ billing: billingClient, log: logger });
  const replies = new ReplyRouter({
    bus,
    prefix,
    logger,
    onAnswerAckLost: (jobId) => delivered.mark(holdIdOfJob(jobId)),
  });
  await replies.start();
  const replyTimeoutMs = options.replyTimeoutMs ?? 10_000;
  const names = gatewayNames(prefix);
  const adminToken = randomBytes(24).toString('hex');
  const authFailures = new AuthFailureLimiter({
    failuresPerMinute: options.authFailuresPerMinute ?? 100_000,
  });
  const app = buildEdgeApp({
    logger,
    metrics: createServiceMetrics('edge', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
    deps: {
      billing: billingClient,
      dashboardBilling,
      dispatcher: createDispatcherClient({
        baseUrl: options.dispatcherUrl ?? 'http://127.0.0.1:9',
        token: options.dispatcherToken ?? 'd'.repeat(32),
        timeoutMs: 2_000,
      }),
      jobs: new InferenceJobs({
        publisher: new JobPublisher(bus, names),
        replies,
        billing: billingClient,
        releases: new HoldReleases({ billing: billingClient }),
        replyTimeoutMs,
        asyncDeadlineMs: 60_000,
      }),
      idempotency: new Idempotency(
        billingClient,
        replyTimeoutMs + 5_000,
        identifier(billingClient, authFailures),
        delivered,
      ),
      background: new BackgroundResponses(billingClient, 100),
      limits: {
        jsonBodyBytes: options.jsonBodyBytes ?? 1024 * 1024,
        uploadBytes: options.uploadBytes ?? 64 * 1024,
        ...(options.requestsInProgress === undefined
          ? {}
          : { requestsInProgress: options.requestsInProgress }),
        webhookAllowInsecure: options.webhookAllowInsecure ?? false,
      },
      adminToken,
      authFailures,
      ...(options.dashboard ? { dashboard: options.dashboard } : {}),
    },
  });
  return {
    app,
    api: request(app),
    adminToken,
    prefix,
    names,
    bus,
    replies,
    close: async () => {
      await replies.stop();
      delivered.stop();
      await bus.close();
      await billingClient.close();
      await dashboardBilling.close();
      await directAdmissions?.close();
    },
  };
}

export const bearer = (credential: string) => ({ Authorization: `Bearer ${credential}` });
