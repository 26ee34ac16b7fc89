import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createInternalHttp } from './internal-http.js';

/** Internal HTTP is bounded: a silent or absent service is 503, never a hung request. */

let server: Server;
let baseUrl: string;
let calls = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    calls += 1;
    if (req.url === '/silent') return; // never answers
    if (req.url === '/flaky' && calls % 2 === 1) {
      res.writeHead(503).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token: req.headers['x-internal-token'] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('internal HTTP', () => {
  it('sends the credential and reads the answer over pooled connections', async () => {
    const http = createInternalHttp({
      service: 's',
      baseUrl,
      token: 't'.repeat(32),
      timeoutMs: 2_000,
    });
    const answer = await http({ method: 'GET', path: '/ok' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({ token: 't'.repeat(32) });
    await http.close();
  });

  it('answers 503 service_unavailable when the service does not answer in time', async () => {
    const http = createInternalHttp({ service: 's', baseUrl, token: 'x', timeoutMs: 300 });
    const startedAt = Date.now();
    await expect(http({ method: 'GET', path: '/silent' })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    await http.close();
  });

  it('answers 503 when nothing listens, after retrying an idempotent call', async () => {
    const http = createInternalHttp({
      service: 's',
      baseUrl: 'http://127.0.0.1:1',
      token: 'x',
      timeoutMs: 500,
      minRetryDelayMs: 1,
    });
    await expect(http({ method: 'GET', path: '/x', retry: true })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    await http.close();
  });

  it('retries a 5xx only when asked to (the worker’s settlement)', async () => {
    const http = createInternalHttp({
      service: 's',
      baseUrl,
      token: 'x',
      timeoutMs: 1_000,
      retryServerErrors: true,
      minRetryDelayMs: 1,
    });
    calls = 0;
    expect((await http({ method: 'POST', path: '/flaky', retry: true })).status).toBe(200);
    calls = 0;
    const plain = createInternalHttp({ service: 's', baseUrl, token: 'x', timeoutMs: 1_000 });
    expect((await plain({ method: 'POST', path: '/flaky', retry: true })).status).toBe(503);
    await Promise.all([http.close(), plain.close()]);
  });

  it('refuses a path that URL normalisation would change, before sending anything', async () => {
    const http = createInternalHttp({ service: 's', baseUrl, token: 'x', timeoutMs: 1_000 });
    calls = 0;
    await expect(
      http({ method: 'GET', path: '/internal/v1/models/../admin/ledger/check' }),
    ).rejects.toMatchObject({ code: 'resource_not_found' });
    expect(calls).toBe(0);
    await http.close();
  });
});
