import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { loadConfig } from '@gateway/config';
import type { InferenceCompletedPayload } from '@gateway/contracts';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createPostgresPool, createServiceApp, finishApp } from '@gateway/runtime';
import { createTestDatabase } from '@gateway/testing';
import { dispatcherConfigSchema, type DispatcherConfig } from '../config.js';
import { dispatcherDatabaseTemplate } from '../db/migrate.js';
import { createDispatcher, type Dispatcher } from '../dispatcher.js';
import { mountInternalApi } from '../http/internal-routes.js';
import type { Lookup } from '../outbound/guarded-agent.js';
import { RECEIVER_HOST } from './test-ca.suite.js';

export const TEST_INTERNAL_TOKEN = randomBytes(32).toString('hex');

/** Test names resolve to loopback; anything else fails without touching real DNS. */
export const testLookup =
  (names: Record<string, string> = {}): Lookup =>
  (hostname, _options, callback) => {
    const table: Record<string, string> = {
      [RECEIVER_HOST]: '127.0.0.1',
      localhost: '127.0.0.1',
      ...names,
    };
    const address = table[hostname];
    if (!address) {
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
        code: 'ENOTFOUND',
      });
      process.nextTick(() => callback(error, []));
      return;
    }
    process.nextTick(() => callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]));
  };

export interface Harness {
  config: DispatcherConfig;
  pool: pg.Pool;
  dispatcher: Dispatcher;
  metrics: ReturnType<typeof createServiceMetrics>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  extraCaPem?: string;
  lookup?: Lookup;
  random?: () => number;
}

/** Settings every test shares: fast ticks, loopback receivers allowed, a throwaway key. */
export function testEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    AMQP_URL: 'amqp://127.0.0.1:1',
    INTERNAL_TOKEN: TEST_INTERNAL_TOKEN,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DISPATCH_INTERVAL_MS: '10',
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
  };
}

/**
 * The dispatcher in-process, on its own database cloned from the migrated template, connected
 * as the runtime role (as deployed): a statement it lacks a grant for fails the test.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const db = await createTestDatabase(dispatcherDatabaseTemplate);
  const pool = createPostgresPool(db.runtimeUrl, 5);
  // pool.end() resolves before its sockets close; dropping the database may hit one of them.
  pool.on('error', () => undefined);
  const config = loadConfig('dispatcher', dispatcherConfigSchema, {
    ...testEnv(db.runtimeUrl),
    ...options.env,
  });
  const metrics = createServiceMetrics('dispatcher', { defaultMetrics: false });
  const dispatcher = createDispatcher(config, {
    pool,
    logger: createLogger({ service: 'dispatcher', level: 'silent' }),
    registry: metrics.registry,
    lookup: options.lookup ?? testLookup(),
    ...(options.extraCaPem ? { extraCaPem: options.extraCaPem } : {}),
    ...(options.random ? { random: options.random } : {}),
  });
  return {
    config,
    pool,
    dispatcher,
    metrics,
    close: async () => {
      await dispatcher.loop.stop();
      dispatcher.client.close();
      await pool.end();
      await db.drop();
    },
  };
}

/** The harness's internal API (behind `TEST_INTERNAL_TOKEN`) as an app, not yet listening. */
export function internalApiApp(harness: Harness) {
  const logger = createLogger({ service: 'dispatcher', level: 'silent' });
  const app = createServiceApp({
    logger,
    metrics: harness.metrics,
    readiness: [],
    isShuttingDown: () => false,
  });
  mountInternalApi(app, harness.dispatcher, TEST_INTERNAL_TOKEN);
  finishApp(app, logger);
  return app;
}

export function completedEvent(
  webhookUrl: string,
  overrides: Partial<InferenceCompletedPayload> = {},
): InferenceCompletedPayload {
  return {
    jobId: `inf-${randomUUID()}`,
    accountId: 'usr_test',
    model: 'acme/tiny-1',
    status: 'succeeded',
    usage: { promptTokens: 12, completionTokens: 34 },
    costMicroDzd: '4200',
    results: [{ generated_text: 'a secret answer' }],
    webhookUrl,
    webhookFormat: 'A',
    runtimeMs: 812,
    completedAtMs: Date.now(),
    ...overrides,
  };
}

/** Polls until `probe` returns a value (not undefined), or fails at the deadline. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export interface DeliveryRowForTest {
  id: string;
  status: string;
  attempt_count: number;
  payload_ciphertext: Buffer | null;
}

export async function deliveryOf(pool: pg.Pool, jobId: string): Promise<DeliveryRowForTest> {
  const result = await pool.query<DeliveryRowForTest>(
    'SELECT id, status, attempt_count, payload_ciphertext FROM webhook_deliveries WHERE job_id = $1',
    [jobId],
  );
  return result.rows[0]!;
}

/** Waits until the job's delivery reaches a final status. */
export function settled(pool: pg.Pool, jobId: string, timeoutMs = 15_000) {
  return waitFor(
    async () => {
      const row = await deliveryOf(pool, jobId);
      return row && ['delivered', 'failed', 'dropped'].includes(row.status) ? row : undefined;
    },
    timeoutMs,
    `delivery of ${jobId} to settle`,
  );
}
