import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  completedEvent,
  settled,
  startHarness,
  testLookup,
  type Harness,
} from '../testing/harness.suite.js';
import { DESTINATION_REFUSED, GuardedHttpsAgent } from './guarded-agent.js';
import { createWebhookClient } from './webhook-client.js';

interface Canary {
  port: number;
  connections: number;
  close(): Promise<void>;
}

/** Counts every TCP connection that reaches it; a refused destination must leave it at 0. */
async function startCanary(host: string, port = 0): Promise<Canary> {
  const canary = { port: 0, connections: 0, close: async () => {} };
  const server = net.createServer((socket) => {
    canary.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  canary.port = (server.address() as net.AddressInfo).port;
  canary.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return canary;
}

describe('outbound safety (SSRF): refused before any connection', () => {
  let harness: Harness;
  let v4: Canary;
  let v6: Canary;

  beforeAll(async () => {
    v4 = await startCanary('127.0.0.1');
    v6 = await startCanary('::1', v4.port).catch(() => startCanary('::1'));
    harness = await startHarness({
      env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'false' },
      lookup: testLookup({ 'loopback.test': '127.0.0.1', 'v6loop.test': '::1' }),
    });
  });

  afterAll(async () => {
    await harness?.close();
    await v4?.close();
    await v6?.close();
  });

  const matrix = () => [
    `http://127.0.0.1:${v4.port}/hook`,
    `https://127.0.0.1:${v4.port}/hook`,
    `https://[::1]:${v6.port}/hook`,
    `https://localhost:${v4.port}/hook`,
    'https://169.254.169.254/latest/meta-data/',
    `https://[::ffff:127.0.0.1]:${v4.port}/hook`,
    `https://2130706433:${v4.port}/hook`,
    'https://10.0.0.1/hook',
    'https://172.16.0.1/hook',
    'https://192.168.0.1/hook',
    'https://100.64.0.1/hook',
    `https://0.0.0.0:${v4.port}/hook`,
    `https://loopback.test:${v4.port}/hook`,
    `https://v6loop.test:${v6.port}/hook`,
  ];

  it('each destination of the matrix fails its delivery at once, with no connection', async () => {
    const jobs = await Promise.all(
      matrix().map(async (url) => {
        const event = completedEvent(url);
        await harness.dispatcher.intake.accept(event);
        return { url, jobId: event.jobId };
      }),
    );
    await harness.dispatcher.loop.tick();
    await harness.dispatcher.loop.idle();
    for (const { url, jobId } of jobs) {
      const delivery = await settled(harness.pool, jobId);
      const attempts = await harness.pool.query(
        'SELECT status_code, outcome, error FROM webhook_attempts WHERE delivery_id = $1',
        [delivery.id],
      );
      expect({ url, status: delivery.status, attempts: attempts.rows }).toEqual({
        url,
        status: 'failed',
        attempts: [
          {
            status_code: null,
            outcome: 'failed',
            error: expect.stringMatching(/^destination refused: /),
          },
        ],
      });
    }
    expect(v4.connections + v6.connections).toBe(0);
  });

  it('the agent itself refuses at connect time, for IP literals and resolved names', async () => {
    const agent = new GuardedHttpsAgent(
      {
        policy: { allowInsecureLoopback: false },
        lookup: testLookup({ 'rebound.test': '127.0.0.1' }),
      },
      {},
    );
    const errorCode = (hostname: string) =>
      new Promise<string | undefined>((resolve) => {
        const request = https.request({ hostname, port: v4.port, method: 'POST', agent });
        request.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
        request.once('response', () => resolve('connected'));
        request.end();
      });
    // No URL pre-check here: only the agent stands between the request and the canary.
    expect(await errorCode('127.0.0.1')).toBe(DESTINATION_REFUSED);
    expect(await errorCode('rebound.test')).toBe(DESTINATION_REFUSED);
    expect(await errorCode('::ffff:7f00:1')).toBe(DESTINATION_REFUSED);
    agent.destroy();
    expect(v4.connections).toBe(0);
  });

  it('control: with loopback allowed, the same request does reach the canary', async () => {
    const client = createWebhookClient({
      timeoutMs: 2_000,
      maxResponseBodyBytes: 1024,
      policy: { allowInsecureLoopback: true },
      lookup: testLookup(),
    });
    const result = await client.post(`https://127.0.0.1:${v4.port}/hook`, {}, Buffer.from('{}'));
    client.close();
    expect(result.failure).toBe('network');
    expect(v4.connections).toBe(1);
  });

  it('the development setting lets http:// reach loopback', async () => {
    const server = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const client = createWebhookClient({
      timeoutMs: 2_000,
      maxResponseBodyBytes: 1024,
      policy: { allowInsecureLoopback: true },
      lookup: testLookup(),
    });
    const result = await client.post(`http://127.0.0.1:${port}/hook`, {}, Buffer.from('{}'));
    client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(result).toMatchObject({ statusCode: 204, failure: null });
  });
});
