import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { makeEnvelope, type InferenceCompletedPayload } from '@gateway/contracts';
import { createGatewayBus, gatewayNames, silentLogger, type MessageBus } from '@gateway/messaging';
import {
  createTestDatabase,
  createTestRole,
  spawnService,
  testAmqpUrl,
  uniquePrefix,
  urlAsRole,
  waitForStatus,
  type ServiceProcess,
} from '@gateway/testing';
import { startReceiver, type Receiver } from './testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from './testing/test-ca.suite.js';
import { TEST_INTERNAL_TOKEN, completedEvent, settled, waitFor } from './testing/harness.suite.js';
import { TEST_RUNTIME_ROLE } from './db/migrate.js';

/** The built service and its migration command (the Jest run builds first), as deployed. */
const ENTRY = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const MIGRATE_ENTRY = fileURLToPath(new URL('../dist/db/migrate-cli.js', import.meta.url));

describe('dispatcher processes: crashes and replicas', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  let db: { url: string; drop(): Promise<void> };
  let pool: pg.Pool;
  let bus: MessageBus;
  let env: NodeJS.ProcessEnv;
  const running: ServiceProcess[] = [];
  const prefix = uniquePrefix('dispatch-proc');
  const names = gatewayNames(prefix);

  const spawnDispatcher = async () => {
    const child = await spawnService({ entry: ENTRY, env });
    running.push(child);
    // Ready once the schema is current and the broker connected.
    await waitForStatus(`${child.baseUrl}/readyz`, 200);
    return child;
  };
  const publish = (event: InferenceCompletedPayload) =>
    bus.publish(
      { exchange: names.exchanges.events, routingKey: names.routingKeys.inferenceCompleted },
      makeEnvelope('inference.completed', event),
    );
  /** The receiver is at 127.0.0.1 (the child has no test resolver); the certificate covers it. */
  const hookUrl = (hookPath: string) => `https://127.0.0.1:${receiver.port}${hookPath}`;
  const attemptCount = async (jobId: string) =>
    Number(
      (
        await pool.query<{ n: string }>(
          `SELECT count(a.*) AS n FROM webhook_deliveries d
             LEFT JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.job_id = $1`,
          [jobId],
        )
      ).rows[0]?.n ?? 0,
    );

  beforeAll(async () => {
    certs = createTestCertificates();
    receiver = await startReceiver(certs);
    // An empty database: the first test migrates it with the migration command, as deployed.
    db = await createTestDatabase();
    await createTestRole(TEST_RUNTIME_ROLE);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => undefined); // see harness.suite.ts
    bus = createGatewayBus({ AMQP_URL: testAmqpUrl(), AMQP_PREFIX: prefix }, silentLogger);
    await bus.start();
    env = {
      // The runtime role, which owns nothing: the processes cannot migrate.
      DATABASE_URL: urlAsRole(db.url, TEST_RUNTIME_ROLE),
      AMQP_URL: testAmqpUrl(),
      AMQP_PREFIX: prefix,
      INTERNAL_TOKEN: TEST_INTERNAL_TOKEN,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DISPATCH_INTERVAL_MS: '20',
      // A long first retry, so a kill lands between attempts, not during one.
      RETRY_SCHEDULE_A_MS: '0,1500,100,100',
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: certs.caFile,
      LOG_LEVEL: 'info',
    };
  });

  afterAll(async () => {
    // A child killed earlier has a signalCode, not an exitCode; stop() would wait forever.
    const alive = running.filter((child) => child.child.signalCode === null);
    await Promise.all(alive.map((child) => child.stop('SIGKILL')));
    await bus?.close();
    await pool?.end();
    await db?.drop();
    await receiver?.close();
    certs?.remove();
  });

  it('stays unready until the migration command, as the owner, migrates and grants', async () => {
    const waiting = await spawnService({ entry: ENTRY, env });
    running.push(waiting);
    await sleep(500);
    const unready = await fetch(`${waiting.baseUrl}/readyz`);
    expect(unready.status).toBe(503);
    expect(await unready.text()).toContain('schema');
    await promisify(execFile)(process.execPath, [MIGRATE_ENTRY], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: db.url,
        RUNTIME_DATABASE_ROLE: TEST_RUNTIME_ROLE,
        LOG_LEVEL: 'warn',
      },
      timeout: 30_000,
    });
    await waitForStatus(`${waiting.baseUrl}/readyz`, 200);
    await waiting.stop('SIGTERM');
  }, 30_000);

  it('kill -9 between attempts loses nothing, not even events published while down', async () => {
    receiver.setResponder('/crash', (_request, index) => ({ status: index < 2 ? 500 : 204 }));
    const first = await spawnDispatcher();
    const event = completedEvent(hookUrl('/crash'));
    await publish(event);
    await waitFor(async () => ((await attemptCount(event.jobId)) === 1 ? true : undefined));
    await first.stop('SIGKILL');

    const whileDown = completedEvent(hookUrl('/while-down'));
    await publish(whileDown);
    await spawnDispatcher();

    const delivery = await settled(pool, event.jobId, 20_000);
    expect(delivery.status).toBe('delivered');
    expect(await attemptCount(event.jobId)).toBe(3);
    const requests = receiver.requestsTo('/crash');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers['x-service-delivery-id']))).toEqual(
      new Set([delivery.id]),
    );
    expect((await settled(pool, whileDown.jobId)).status).toBe('delivered');
    expect(receiver.requestsTo('/while-down')).toHaveLength(1);
  }, 40_000);

  it('SIGTERM lets the attempt in flight finish and record, then exits 0', async () => {
    const alive = running.filter((child) => child.child.signalCode === null);
    await Promise.all(alive.map((child) => child.stop('SIGKILL')));
    const dispatcher = await spawnDispatcher();
    receiver.setResponder('/slowish', () => ({ status: 204, delayMs: 1_500 }));
    const event = completedEvent(hookUrl('/slowish'));
    await publish(event);
    await waitFor(() => receiver.requestsTo('/slowish')[0], 10_000, 'the attempt to start');
    const { code, durationMs } = await dispatcher.stop('SIGTERM');
    expect(code).toBe(0);
    expect(durationMs).toBeGreaterThan(1_000);
    expect(durationMs).toBeLessThan(10_000);
    expect((await settled(pool, event.jobId, 1_000)).status).toBe('delivered');
  }, 30_000);

  it('two dispatcher processes send every attempt exactly once', async () => {
    await Promise.all([spawnDispatcher(), spawnDispatcher()]);
    const perDelivery = new Map<string, number>();
    receiver.setResponder('/pair', (request) => {
      const id = String(request.headers['x-service-delivery-id']);
      const seen = perDelivery.get(id) ?? 0;
      perDelivery.set(id, seen + 1);
      return { status: seen === 0 ? 503 : 204 };
    });
    const events = Array.from({ length: 30 }, () => completedEvent(hookUrl('/pair')));
    await Promise.all(events.map(publish));
    for (const event of events) {
      expect((await settled(pool, event.jobId, 20_000)).status).toBe('delivered');
    }
    expect(perDelivery.size).toBe(events.length);
    expect([...perDelivery.values()].every((count) => count === 2)).toBe(true);
    for (const event of events) expect(await attemptCount(event.jobId)).toBe(2);
    const logged = () =>
      running
        .slice(-2)
        .map((child) => child.logs.filter((line) => line.msg === 'webhook attempt').length);
    // Services write their log in buffers of up to 200 ms: wait for every attempt's line.
    await waitFor(
      () => logged().reduce((a, b) => a + b, 0) >= events.length * 2 || undefined,
      5_000,
      'every attempt logged',
    ).catch(() => undefined);
    const attemptsLogged = logged();
    // Both replicas took part (they compete for events and for due attempts).
    expect(attemptsLogged.every((count) => count > 0)).toBe(true);
    expect(attemptsLogged.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(events.length * 2);
  }, 40_000);

  it('sends the first attempt when the completion arrives, not at the next 60 s tick', async () => {
    const alive = running.filter((child) => child.child.signalCode === null);
    await Promise.all(alive.map((child) => child.stop('SIGKILL')));
    const child = await spawnService({
      entry: ENTRY,
      env: { ...env, DISPATCH_INTERVAL_MS: '60000' },
    });
    running.push(child);
    await waitForStatus(`${child.baseUrl}/readyz`, 200);
    // The start-up tick is behind us: from now on the 60 s interval alone would wait a minute.
    await sleep(300);
    const events = Array.from({ length: 5 }, () => completedEvent(hookUrl('/prompt')));
    const publishedAtMs = Date.now();
    await Promise.all(events.map(publish));
    await waitFor(
      () => (receiver.requestsTo('/prompt').length === events.length ? true : undefined),
      5_000,
      'the first attempts',
    );
    expect(Date.now() - publishedAtMs).toBeLessThan(5_000);
    await child.stop('SIGTERM');
  }, 30_000);
});
