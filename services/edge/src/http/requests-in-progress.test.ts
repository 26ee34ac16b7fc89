import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from '@jest/globals';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp } from '@gateway/runtime';
import { silentStream } from '../testing/silent-log.suite.js';
import { requestsInProgress, type InProgressLimits } from './requests-in-progress.js';

/*
 * Edge bounds the public API requests it holds at once, by count and by body bytes: one past
 * either is refused at once (503, Retry-After: 1) before its body is read (a chunked body: as
 * soon as the bytes read would overfill the budget), and a request gives its share back when its
 * answer closes, finished or cut by its client.
 */

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * `/held` answers when `release()` is called, `/read-held` too once it has read the body;
 * `/quick` at once.
 */
async function serve(limits: InProgressLimits) {
  const logger = createLogger({ service: 'edge', destination: silentStream });
  const metrics = createServiceMetrics('edge', { defaultMetrics: false });
  const app = createServiceApp({ logger, metrics, readiness: [], isShuttingDown: () => false });
  const inProgress = requestsInProgress(limits);
  app.use('/v1', inProgress.handler);
  const waiting: (() => void)[] = [];
  app.post('/v1/held', (_req, res) => {
    waiting.push(() => res.json({ ok: true }));
  });
  app.post('/v1/read-held', express.json({ limit: '1mb' }), (_req, res) => {
    waiting.push(() => res.json({ ok: true }));
  });
  app.post('/v1/quick', express.json(), (_req, res) => {
    res.json({ ok: true });
  });
  finishApp(app, logger);
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const heldCount = async (count: number) => {
    while (waiting.length < count) await new Promise((resolve) => setTimeout(resolve, 2));
  };
  return {
    inProgress,
    heldCount,
    release: () => waiting.splice(0).forEach((answer) => answer()),
    post: (route: string, headers: Record<string, string> = {}, body = '{}') => {
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: route,
        headers: { 'content-type': 'application/json', ...headers },
      });
      const answer = new Promise<{
        status: number;
        headers: http.IncomingHttpHeaders;
        body: string;
      }>((resolve, reject) => {
        request.on('error', reject);
        request.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
          );
        });
      });
      request.end(body);
      return { request, answer };
    },
  };
}

const limits = { requestsMax: 2, bodyBytesMax: 1_000_000, largestBodyBytes: 100_000 };

describe('requests in progress', () => {
  it('refuses the request past the count with 503 and Retry-After 1, then takes the next', async () => {
    const edge = await serve(limits);
    const first = edge.post('/v1/held');
    const second = edge.post('/v1/held');
    await edge.heldCount(2);

    const refused = await edge.post('/v1/quick').answer;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { code: 'service_unavailable', type: 'service_error' },
    });

    edge.release();
    expect((await first.answer).status).toBe(200);
    expect((await second.answer).status).toBe(200);
    expect(edge.inProgress.requests()).toBe(0);
    expect((await edge.post('/v1/quick').answer).status).toBe(200);
  });

  it('counts declared body bytes, and a chunked body by the bytes read', async () => {
    const edge = await serve({ ...limits, requestsMax: 3, bodyBytesMax: 150_000 });
    const big = 'x'.repeat(90_000);
    const held = edge.post('/v1/held', { 'content-length': String(big.length) }, big);
    await edge.heldCount(1);
    expect(edge.inProgress.bodyBytes()).toBe(90_000);

    // 90,000 + 70,000 > 150,000: refused; a small body still fits.
    const tooMuch = 'y'.repeat(70_000);
    expect((await edge.post('/v1/quick', {}, tooMuch).answer).status).toBe(503);
    expect((await edge.post('/v1/quick').answer).status).toBe(200);
    // No declared length: its bytes count once read.
    const small = JSON.stringify({ text: 'z'.repeat(20_000) });
    const chunked = edge.post('/v1/read-held', { 'transfer-encoding': 'chunked' }, small);
    await edge.heldCount(2);
    expect(edge.inProgress.bodyBytes()).toBe(90_000 + small.length);
    expect(edge.inProgress.requests()).toBe(2);

    edge.release();
    expect((await held.answer).status).toBe(200);
    expect((await chunked.answer).status).toBe(200);
    expect(edge.inProgress.bodyBytes()).toBe(0);
  });

  it('answers 503 to a chunked body that would overfill the budget, and keeps none of it', async () => {
    const edge = await serve({ ...limits, requestsMax: 3, bodyBytesMax: 150_000 });
    const big = 'x'.repeat(90_000);
    const held = edge.post('/v1/held', { 'content-length': String(big.length) }, big);
    await edge.heldCount(1);

    // 90,000 + 100,000 > 150,000, known only while the chunked body is read.
    const overfill = JSON.stringify({ text: 'y'.repeat(100_000) });
    const cut = await edge.post('/v1/read-held', { 'transfer-encoding': 'chunked' }, overfill)
      .answer;
    expect(cut.status).toBe(503);
    expect(cut.headers['retry-after']).toBe('1');
    expect(cut.headers.connection).toBe('close');
    expect(JSON.parse(cut.body)).toMatchObject({ error: { code: 'service_unavailable' } });
    while (edge.inProgress.requests() > 1) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(edge.inProgress.bodyBytes()).toBe(90_000);

    // The same body fits once the held one is done.
    edge.release();
    expect((await held.answer).status).toBe(200);
    const fits = edge.post('/v1/read-held', { 'transfer-encoding': 'chunked' }, overfill);
    await edge.heldCount(1);
    expect(edge.inProgress.bodyBytes()).toBe(overfill.length);
    edge.release();
    expect((await fits.answer).status).toBe(200);
  });

  it('gives the share back when the client goes away before its answer', async () => {
    const edge = await serve({ ...limits, requestsMax: 1 });
    const gone = edge.post('/v1/held');
    gone.answer.catch(() => undefined);
    await edge.heldCount(1);
    expect(edge.inProgress.requests()).toBe(1);

    gone.request.destroy();
    while (edge.inProgress.requests() > 0) await new Promise((resolve) => setTimeout(resolve, 2));
    expect((await edge.post('/v1/quick').answer).status).toBe(200);
  });
});
