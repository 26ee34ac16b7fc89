import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  makeEnvelope,
  parseEnvelope,
  type InferenceCompletedPayload,
  type InferenceJobPayload,
  type InferenceReplyPayload,
} from '@gateway/contracts';
import {
  createGatewayBus,
  createRabbitMqBus,
  gatewayNames,
  gatewayTopology,
  silentLogger,
  type MessageBus,
} from '@gateway/messaging';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createPostgresPool, listen } from '@gateway/runtime';
import { testAmqpUrl, testServiceAmqpUrl, waitFor } from '@gateway/testing';
import type { BillingUnderTest } from '../../../billing/src/testing/billing-under-test.suite.js';
import { createBillingClient } from '../billing/billing-client.js';
import { createLedgerHoldEnds } from '../billing/ledger-hold-ends.js';
import { withDirectJobs } from '../jobs/direct-jobs.js';
import { Cancellations, type JobRunnerDeps } from '../jobs/run-job.js';
import { startJobConsumers } from '../jobs/job-consumer.js';
import { createWorkerMetrics } from '../jobs/metrics.js';
import { createNodeRegistry } from '../upstream/node-pool.js';
import { closeUpstreamAgent, createUpstreamAgent } from '../upstream/upstream-agent.js';

const silent = new Writable({ write: (_c, _e, cb) => cb() });

export interface WorkerOptions {
  external?: { url: string; apiKey: string };
  prefetch?: { default: number; priority: number };
  timeouts?: { firstByteMs?: number; idleMs?: number; requestMs?: number; generationMs?: number };
  maxAttempts?: number;
  billingAttempts?: number;
  healthIntervalMs?: number;
  /** Connect as the worker's own broker user, declaring only its part (as deployed). */
  brokerUser?: boolean;
  /**
   * End holds in billing's database as the worker's ledger role (ADR 0070), at this URL
   * (`billing.ledgerUrl()`, or an unreachable one); unset: through billing's API.
   */
  ledgerUrl?: string;
  /**
   * Also take synchronous jobs over HTTP (ADR 0072), this many at once, and at most
   * `perConnection` on one connection (`DIRECT_JOBS_PER_CONNECTION`; unset: no limit).
   */
  direct?: { maxInFlight: number; perConnection?: number };
}

/** Edge's credential at the test worker's direct job API. */
export const DIRECT_JOBS_TOKEN = 'd'.repeat(64);

/** A started connection to the test broker, with the gateway's topology under `prefix`. */
export async function startTestBus(prefix: string): Promise<MessageBus> {
  const bus = createRabbitMqBus({
    url: testAmqpUrl(),
    topology: gatewayTopology(prefix),
    logger: silentLogger,
  });
  await bus.start();
  return bus;
}

/** The worker's real job consumers, in process (the kill -9 test runs it as a real process). */
export async function startWorker(
  billing: Pick<BillingUnderTest, 'url' | 'workerToken'>,
  prefix: string,
  options: WorkerOptions = {},
): Promise<{ bus: MessageBus; directUrl?: string; stop(): Promise<void> }> {
  const bus = options.brokerUser
    ? createGatewayBus(
        { AMQP_URL: testServiceAmqpUrl('inference-worker'), AMQP_PREFIX: prefix },
        silentLogger,
        { service: 'inference-worker' },
      )
    : await startTestBus(prefix);
  if (options.brokerUser) await bus.start();
  const prefetch = options.prefetch ?? { default: 8, priority: 4 };
  const upstreamAgent = createUpstreamAgent({
    jobsInFlightMax: prefetch.default + prefetch.priority + (options.direct?.maxInFlight ?? 0),
  });
  const registry = createNodeRegistry({ dispatcher: upstreamAgent });
  registry.startHealthChecks(options.healthIntervalMs ?? 100);
  const ledger =
    options.ledgerUrl === undefined
      ? undefined
      : createLedgerHoldEnds({
          pool: createPostgresPool(options.ledgerUrl, 4, { timeoutMs: 2_000, clientTimeout: true }),
          batchMaxInFlight: 2,
        });
  const names = gatewayNames(prefix);
  const deps: JobRunnerDeps = {
    billing: createBillingClient(
      {
        baseUrl: billing.url,
        token: billing.workerToken,
        timeoutMs: 5_000,
        catalogCacheTtlMs: 0,
        attempts: options.billingAttempts ?? 2,
        minRetryDelayMs: 20,
      },
      ledger,
    ),
    registry,
    upstreamAgent,
    cancellations: new Cancellations(60_000),
    timeouts: {
      firstByteMs: 5_000,
      idleMs: 5_000,
      requestMs: 20_000,
      generationMs: 60_000,
      ...options.timeouts,
    },
    responseMaxBytes: 16 * 1024 * 1024,
    maxAttempts: options.maxAttempts ?? 3,
    external: options.external,
  };
  const logger = createLogger({
    service: 'inference-worker',
    ...(process.env.DEBUG_WORKER ? {} : { destination: silent }),
  });
  const metrics = createWorkerMetrics(
    createServiceMetrics('inference-worker', { defaultMetrics: false }).registry,
  );
  await startJobConsumers({
    bus,
    names,
    prefix,
    prefetch,
    deps,
    logger,
    metrics,
  });
  const server = options.direct
    ? await listen(
        withDirectJobs((_req, res) => res.writeHead(404).end(), {
          edgeToken: DIRECT_JOBS_TOKEN,
          maxInFlight: options.direct.maxInFlight,
          accepting: () => true,
          bus,
          names,
          deps,
          logger,
          metrics,
        }),
        '127.0.0.1',
        0,
        { maxRequestsPerConnection: options.direct.perConnection },
      )
    : undefined;
  return {
    bus,
    ...(server && { directUrl: `http://127.0.0.1:${server.port}` }),
    async stop() {
      await server?.close(1_000);
      registry.stop();
      await closeUpstreamAgent(upstreamAgent, 1_000);
      await bus.close();
      await ledger?.close();
    },
  };
}

export interface JobEnd {
  chunks: InferenceReplyPayload[];
  end: InferenceReplyPayload;
}

/**
 * Plays edge's part of the job protocol (docs/job-protocol.md) at the message level: publishes
 * jobs, listens on its own reply queue, sends cancellations, and reads completion events.
 */
export class JobClient {
  private readonly replies = new Map<string, InferenceReplyPayload[]>();
  readonly completions: InferenceCompletedPayload[] = [];
  readonly replyQueue: string;
  private readonly names;

  private constructor(
    readonly bus: MessageBus,
    readonly prefix: string,
  ) {
    this.names = gatewayNames(prefix);
    this.replyQueue = `${prefix}edge.replies.${randomUUID()}`;
  }

  static async start(prefix: string): Promise<JobClient> {
    const bus = await startTestBus(prefix);
    const client = new JobClient(bus, prefix);
    await bus.declareQueue({ name: client.replyQueue, kind: 'transient' });
    await bus.consume(
      client.replyQueue,
      async (delivery) => {
        const reply = parseEnvelope('inference.reply', delivery.body).payload;
        const list = client.replies.get(reply.jobId) ?? [];
        list.push(reply);
        client.replies.set(reply.jobId, list);
        return 'ack';
      },
      { prefetch: 100 },
    );
    await bus.consume(
      client.names.queues.webhookCompletions,
      async (delivery) => {
        client.completions.push(parseEnvelope('inference.completed', delivery.body).payload);
        return 'ack';
      },
      { prefetch: 100 },
    );
    return client;
  }

  async publish(
    job: Omit<
      InferenceJobPayload,
      'jobId' | 'deadlineAtMs' | 'serviceTier' | 'stream' | 'replyTo'
    > &
      Partial<InferenceJobPayload>,
    options: { async?: boolean } = {},
  ): Promise<string> {
    const payload: InferenceJobPayload = {
      jobId: `job-${randomUUID()}`,
      serviceTier: 'default',
      stream: false,
      deadlineAtMs: Date.now() + 60_000,
      ...(options.async ? {} : { replyTo: this.replyQueue }),
      ...job,
    };
    const routingKey = payload.serviceTier === 'priority' ? 'priority' : 'default';
    await this.bus.publish(
      { exchange: this.names.exchanges.jobs, routingKey },
      makeEnvelope('inference.job', payload),
      { correlationId: payload.jobId },
    );
    return payload.jobId;
  }

  async cancel(jobId: string): Promise<void> {
    await this.bus.publish(
      { exchange: this.names.exchanges.control, routingKey: this.names.routingKeys.cancelJob },
      makeEnvelope('inference.cancel', { jobId, reason: 'client_disconnected' }),
    );
  }

  repliesOf(jobId: string): InferenceReplyPayload[] {
    return this.replies.get(jobId) ?? [];
  }

  async waitForEnd(jobId: string, timeoutMs = 15_000): Promise<JobEnd> {
    const end = await waitFor(
      () => this.repliesOf(jobId).find((reply) => reply.type !== 'chunk'),
      timeoutMs,
      `end of ${jobId}`,
    );
    return { chunks: this.repliesOf(jobId).filter((reply) => reply.type === 'chunk'), end };
  }

  async waitForCompletion(jobId: string, timeoutMs = 15_000): Promise<InferenceCompletedPayload> {
    return waitFor(
      () => this.completions.find((c) => c.jobId === jobId),
      timeoutMs,
      `completion of ${jobId}`,
    );
  }

  async close(): Promise<void> {
    await this.bus.close();
  }
}
