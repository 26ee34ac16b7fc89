import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  spawnService,
  testAmqpUrl,
  uniquePrefix,
  waitForStatus,
  type ServiceProcess,
  type TestDatabase,
} from '@gateway/testing';
import { createBillingDatabase } from '../../billing/src/testing/billing-under-test.suite.js';

/**
 * `EDGE_SURFACES`: the public and operator API in one process, the dashboard in another (as
 * Kubernetes runs them), each answering 404 for what the other serves. The dashboard process
 * holds neither the broker credential nor the operator token, and is ready without a broker.
 */

const entry = (service: string) => path.resolve('services', service, 'dist', 'main.js');
const internalToken = randomBytes(32).toString('hex');
const adminToken = randomBytes(32).toString('hex');
const prefix = uniquePrefix('surfaces');

let db: TestDatabase;
let billing: ServiceProcess;
let api: ServiceProcess;
let dashboard: ServiceProcess;

const edgeEnv = (surfaces: string, env: NodeJS.ProcessEnv = {}) => ({
  EDGE_SURFACES: surfaces,
  AMQP_PREFIX: prefix,
  BILLING_URL: billing.baseUrl,
  BILLING_INTERNAL_TOKEN: internalToken,
  DISPATCHER_URL: 'http://127.0.0.1:9',
  DISPATCHER_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
  ...env,
});

beforeAll(async () => {
  db = await createBillingDatabase();
  billing = await spawnService({
    entry: entry('billing'),
    env: {
      AMQP_URL: testAmqpUrl(),
      AMQP_PREFIX: prefix,
      DATABASE_URL: db.runtimeUrl,
      EDGE_INTERNAL_TOKEN: internalToken,
      WORKER_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
      MASTER_KEY: randomBytes(32).toString('base64'),
    },
  });
  [api, dashboard] = await Promise.all([
    spawnService({
      entry: entry('edge'),
      env: edgeEnv('api,admin', { AMQP_URL: testAmqpUrl(), ADMIN_TOKEN: adminToken }),
    }),
    spawnService({
      entry: entry('edge'),
      env: edgeEnv('dashboard', { AMQP_URL: '', ADMIN_TOKEN: '' }),
    }),
  ]);
  await Promise.all([api, dashboard].map((edge) => waitForStatus(`${edge.baseUrl}/readyz`, 200)));
});

afterAll(async () => {
  await Promise.all([api, dashboard].map((edge) => edge?.stop('SIGTERM')));
  await billing?.stop('SIGTERM');
  await db?.drop();
});

async function answer(edge: ServiceProcess, method: string, route: string, headers = {}) {
  const response = await fetch(`${edge.baseUrl}${route}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(method === 'POST'
      ? { body: JSON.stringify({ email: 'no@example.com', password: 'x' }) }
      : {}),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

describe('edge surfaces', () => {
  it('serves the dashboard from its own process, without a broker or the operator token', async () => {
    // A sign-in reached billing (which checked it) through the dashboard process.
    expect(await answer(dashboard, 'POST', '/dashboard/api/session')).toEqual({
      status: 401,
      code: 'invalid_credentials',
    });
    const ready = (await (await fetch(`${dashboard.baseUrl}/readyz`)).json()) as object;
    expect(ready).toEqual({ status: 'ready', checks: { billing: 'ok' } });
    const apiReady = (await (await fetch(`${api.baseUrl}/readyz`)).json()) as object;
    expect(apiReady).toEqual({
      status: 'ready',
      checks: { rabbitmq: 'ok', replies: 'ok', billing: 'ok' },
    });
    for (const route of ['/v1/chat/completions', '/admin/v1/accounts'])
      expect(
        await answer(dashboard, 'POST', route, { Authorization: `Bearer ${adminToken}` }),
      ).toEqual({ status: 404, code: 'not_found' });
  });

  it('serves the public and operator API without the dashboard', async () => {
    expect(await answer(api, 'POST', '/dashboard/api/session')).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect(await answer(api, 'GET', '/v1/models')).toEqual({
      status: 401,
      code: 'invalid_api_key',
    });
    const accounts = await fetch(`${api.baseUrl}/admin/v1/accounts`, {
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    expect(accounts.status).toBe(200);
  });

  it('stops at start, exit code 1, when a surface lacks its setting, naming it', async () => {
    const api = await exitOf(edgeEnv('api', { AMQP_URL: '' }));
    expect(api.code).toBe(1);
    expect(api.output).toContain('AMQP_URL: is required with EDGE_SURFACES api');
    const admin = await exitOf(edgeEnv('admin', { AMQP_URL: '', ADMIN_TOKEN: '' }));
    expect(admin.code).toBe(1);
    expect(admin.output).toContain('ADMIN_TOKEN: is required with EDGE_SURFACES admin');
    const unknown = await exitOf(edgeEnv('api,billing', { AMQP_URL: '' }));
    expect(unknown.code).not.toBe(0);
    expect(unknown.output).toContain('EDGE_SURFACES');
  });
});

/** Runs edge with `env` until it exits (within 20 s): its exit code and everything it wrote. */
function exitOf(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [entry('edge')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}
