import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  freeLoopbackPort,
  spawnService,
  testAmqpUrl,
  uniquePrefix,
  waitForStatus,
  type ServiceProcess,
} from '@gateway/testing';
import { billingDatabaseTemplate } from '../../services/billing/src/db/client.js';
import { migrateDatabase } from '../../services/billing/src/db/migrate.js';
import { dispatcherDatabaseTemplate } from '../../services/dispatcher/src/db/migrate.js';

const entry = (service: string) => path.resolve('services', service, 'dist', 'main.js');
const SHUTDOWN_LIMIT_MS = 10_000;

interface Stack {
  databases: { drop(): Promise<void> }[];
  env: Record<string, NodeJS.ProcessEnv>;
}

async function prepareStack(): Promise<Stack> {
  // Migrated: billing is ready only on a current schema (the next describe covers the other case).
  const billingDb = await createTestDatabase(billingDatabaseTemplate);
  // Migrated by the owner; the dispatcher runs as its runtime role and does not migrate.
  const dispatcherDb = await createTestDatabase(dispatcherDatabaseTemplate);
  const prefix = uniquePrefix('boot');
  const amqp = { AMQP_URL: testAmqpUrl(), AMQP_PREFIX: prefix };
  const edgeToken = randomBytes(32).toString('hex');
  const workerToken = randomBytes(32).toString('hex');
  return {
    databases: [billingDb, dispatcherDb],
    env: {
      billing: {
        ...amqp,
        DATABASE_URL: billingDb.url,
        EDGE_INTERNAL_TOKEN: edgeToken,
        WORKER_INTERNAL_TOKEN: workerToken,
        MASTER_KEY: randomBytes(32).toString('base64'),
      },
      dispatcher: {
        DATABASE_URL: dispatcherDb.runtimeUrl,
        ...amqp,
        INTERNAL_TOKEN: randomBytes(32).toString('hex'),
        ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      },
      'inference-worker': {
        ...amqp,
        BILLING_URL: 'http://127.0.0.1:1',
        BILLING_INTERNAL_TOKEN: workerToken,
      },
      edge: {
        ...amqp,
        BILLING_URL: 'http://127.0.0.1:1',
        BILLING_INTERNAL_TOKEN: edgeToken,
        ADMIN_TOKEN: randomBytes(32).toString('hex'),
        DISPATCHER_URL: 'http://127.0.0.1:1',
        DISPATCHER_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
      },
    },
  };
}

describe.each(['billing', 'dispatcher', 'inference-worker', 'edge'])('%s service', (service) => {
  let stack: Stack;
  let billing: ServiceProcess | undefined;
  let running: ServiceProcess;

  beforeAll(async () => {
    stack = await prepareStack();
    if (service !== 'billing') {
      // Edge's readiness includes billing; give every service a live billing to point at.
      billing = await spawnService({ entry: entry('billing'), env: stack.env.billing! });
    }
    const env = { ...stack.env[service] };
    if (billing && env.BILLING_URL) env.BILLING_URL = billing.baseUrl;
    running = await spawnService({ entry: entry(service), env });
  });

  afterAll(async () => {
    await running?.stop('SIGKILL');
    await billing?.stop('SIGKILL');
    await Promise.all(stack.databases.map((db) => db.drop()));
  });

  it('answers /healthz and, once its dependencies answer, /readyz', async () => {
    const health = await fetch(`${running.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await waitForStatus(`${running.baseUrl}/readyz`, 200);
    const body = (await ready.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('ready');
    expect(Object.values(body.checks).every((v) => v === 'ok')).toBe(true);
    expect(Object.keys(body.checks).length).toBeGreaterThan(0);
  });

  it('serves Prometheus metrics including its HTTP latency histogram', async () => {
    const response = await fetch(`${running.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    const prefix = service.replace('-', '_');
    expect(text).toContain(`${prefix}_http_request_duration_seconds_bucket`);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('answers unknown routes with the error shape and a request id', async () => {
    const response = await fetch(`${running.baseUrl}/nope`, {
      headers: { 'X-Request-Id': 'trace-123' },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    expect(await response.json()).toEqual({
      error: { message: 'No route for GET /nope', type: 'service_error', code: 'not_found' },
    });
  });

  it('exits 0 within 10 s of SIGTERM, logging the stop', async () => {
    const { code, durationMs } = await running.stop('SIGTERM');
    expect(code).toBe(0);
    expect(durationMs).toBeLessThan(SHUTDOWN_LIMIT_MS);
    expect(running.logs.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['shutting down', 'stopped']),
    );
  });
});

describe('readiness reports the missing dependency', () => {
  it('billing on an unmigrated database is not ready, nor is an edge using it, until migrated', async () => {
    const stack = await prepareStack();
    const empty = await createTestDatabase();
    stack.databases.push(empty);
    const billing = await spawnService({
      entry: entry('billing'),
      env: { ...stack.env.billing, DATABASE_URL: empty.url },
    });
    const edge = await spawnService({
      entry: entry('edge'),
      env: { ...stack.env.edge, BILLING_URL: billing.baseUrl },
    });
    try {
      const billingReady = await fetch(`${billing.baseUrl}/readyz`);
      expect(billingReady.status).toBe(503);
      const billingBody = (await billingReady.json()) as { checks: Record<string, string> };
      expect(billingBody.checks).toMatchObject({ postgres: 'ok' });
      expect(billingBody.checks.schema).toMatch(/^schema not migrated: .*_init/);
      const edgeReady = await fetch(`${edge.baseUrl}/readyz`);
      expect(edgeReady.status).toBe(503);
      const edgeBody = (await edgeReady.json()) as { checks: Record<string, string> };
      expect(edgeBody.checks.billing).toMatch(
        /^billing answered 503 \(schema: schema not migrated/,
      );

      await migrateDatabase(empty.url);
      await waitForStatus(`${billing.baseUrl}/readyz`, 200);
      await waitForStatus(`${edge.baseUrl}/readyz`, 200);
    } finally {
      await edge.stop('SIGKILL');
      await billing.stop('SIGKILL');
      await Promise.all(stack.databases.map((db) => db.drop()));
    }
  });

  it('billing answers /readyz 503 naming postgres when the database is unreachable', async () => {
    const closedPort = await freeLoopbackPort();
    const billing = await spawnService({
      entry: entry('billing'),
      env: {
        AMQP_URL: testAmqpUrl(),
        AMQP_PREFIX: uniquePrefix('boot-nodb'),
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/none`,
        EDGE_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
        WORKER_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
        MASTER_KEY: randomBytes(32).toString('base64'),
      },
    });
    try {
      const response = await fetch(`${billing.baseUrl}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('unavailable');
      expect(body.checks.postgres).toMatch(/reach database server|ECONNREFUSED/);
      expect((await billing.stop('SIGTERM')).code).toBe(0);
    } finally {
      await billing.stop('SIGKILL');
    }
  });

  it('--check-config exits 1 listing every problem, and 0 when valid', async () => {
    const { spawnSync } = await import('node:child_process');
    const bad = spawnSync(process.execPath, [entry('edge'), '--check-config'], {
      env: { PATH: process.env.PATH, PORT: 'x' },
      encoding: 'utf8',
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/AMQP_URL: is required/);
    expect(bad.stderr).toMatch(/BILLING_URL: is required/);
    expect(bad.stderr).toMatch(/PORT: must be integer/);
    const good = spawnSync(process.execPath, [entry('edge'), '--check-config'], {
      env: {
        PATH: process.env.PATH,
        AMQP_URL: 'amqp://127.0.0.1:1',
        BILLING_URL: 'http://127.0.0.1:1',
        BILLING_INTERNAL_TOKEN: 'b'.repeat(32),
        ADMIN_TOKEN: 'a'.repeat(32),
        DISPATCHER_URL: 'http://127.0.0.1:1',
        DISPATCHER_INTERNAL_TOKEN: 'd'.repeat(32),
      },
      encoding: 'utf8',
    });
    expect(good.status).toBe(0);
  });
});
