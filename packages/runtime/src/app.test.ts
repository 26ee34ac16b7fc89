import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, currentRequestId, finishApp, withRequestId } from './app.js';

function buildApp(
  options: { ready?: boolean; shuttingDown?: boolean; accessLog?: 'failures' } = {},
) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _e, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ service: 'svc', destination });
  const metrics = createServiceMetrics('svc', { defaultMetrics: false });
  const app = createServiceApp({
    logger,
    metrics,
    readiness: [
      {
        name: 'db',
        check: async () => {
          if (!options.ready) throw new Error('connection refused');
        },
      },
    ],
    isShuttingDown: () => options.shuttingDown ?? false,
    accessLog: options.accessLog,
  });
  app.post('/echo', express.json({ limit: '1kb' }), (req, res) => {
    res.json(req.body);
  });
  app.get('/limited', () => {
    throw new GatewayError('rate_limit_exceeded', 'Account rate limit reached', {
      details: { retryAfterS: 7 },
    });
  });
  // What the handler's own calls would send on: the request id, across an await.
  app.get('/current-id', async (_req, res) => {
    await new Promise((resolve) => setImmediate(resolve));
    res.json({ requestId: currentRequestId() ?? null });
  });
  app.get('/boom', () => {
    throw new Error('database password is hunter2');
  });
  finishApp(app, logger);
  return { app, lines, metrics };
}

describe('service app', () => {
  it('logs only failing requests with accessLog "failures"; every request by default', async () => {
    const accessLines = async (accessLog?: 'failures') => {
      const { app, lines } = buildApp({ accessLog });
      await request(app).post('/echo').set('Content-Type', 'application/json').send('{}');
      await request(app).get('/limited');
      await request(app).get('/boom');
      return lines
        .map((line) => JSON.parse(line) as { level: string; req?: { url: string } })
        .filter((line) => line.req)
        .map((line) => [line.req!.url, line.level]);
    };
    expect(await accessLines('failures')).toEqual([
      ['/limited', 'warn'],
      ['/boom', 'error'],
    ]);
    expect((await accessLines()).map(([url]) => url)).toEqual(['/echo', '/limited', '/boom']);
  });

  it('answers readiness 503 with the reason, 200 when ready, 503 while shutting down', async () => {
    const notReady = await request(buildApp().app).get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toEqual({ status: 'unavailable', checks: { db: 'connection refused' } });
    const ready = await request(buildApp({ ready: true }).app).get('/readyz');
    expect(ready.body).toEqual({ status: 'ready', checks: { db: 'ok' } });
    const draining = await request(buildApp({ ready: true, shuttingDown: true }).app).get(
      '/readyz',
    );
    expect(draining.status).toBe(503);
    expect(draining.body.status).toBe('shutting_down');
  });

  it('maps oversized bodies to 413 payload_too_large', async () => {
    const response = await request(buildApp().app)
      .post('/echo')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(2048) }));
    expect(response.status).toBe(413);
    expect(response.body).toEqual({
      error: {
        message: 'Request body is too large',
        type: 'service_error',
        code: 'payload_too_large',
      },
    });
  });

  it('maps malformed JSON to 400 invalid_request_body', async () => {
    const response = await request(buildApp().app)
      .post('/echo')
      .set('Content-Type', 'application/json')
      .send('{"a":');
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request_body');
  });

  it('sets Retry-After from the error details', async () => {
    const response = await request(buildApp().app).get('/limited');
    expect(response.status).toBe(429);
    expect(response.headers['retry-after']).toBe('7');
    expect(response.body.error).toEqual({
      message: 'Account rate limit reached',
      type: 'service_error',
      code: 'rate_limit_exceeded',
    });
  });

  it('hides unexpected errors behind internal_error and logs them', async () => {
    const { app, lines } = buildApp();
    const response = await request(app).get('/boom');
    expect(response.status).toBe(500);
    expect(response.body.error.code).toBe('internal_error');
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
    expect(lines.some((l) => l.includes('unhandled error'))).toBe(true);
  });

  it('gives every response a request id and records route templates in the histogram', async () => {
    const { app, metrics } = buildApp({ ready: true });
    const response = await request(app).get('/healthz');
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9a-f-]{36}$/);
    const unsafe = await request(app).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(unsafe.headers['x-request-id']).toMatch(/^req_/);
    await request(app).get('/missing/123');
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'svc_http_request_duration_seconds_count{service="svc",method="GET",route="/healthz",status="200"} 2',
    );
    expect(text).toContain('route="unmatched",status="404"');
  });

  it('makes the request id current for the whole request, a caller-supplied one included', async () => {
    const { app } = buildApp({ ready: true });
    const own = await request(app).get('/current-id');
    expect(own.body.requestId).toBe(own.headers['x-request-id']);
    const passed = await request(app).get('/current-id').set('X-Request-Id', 'req_from-edge.1');
    expect(passed.body).toEqual({ requestId: 'req_from-edge.1' });
    expect(currentRequestId()).toBeUndefined();
  });

  it('runs work under a given request id, and under none when it is undefined', async () => {
    const seen = await withRequestId('req_job', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return currentRequestId();
    });
    expect(seen).toBe('req_job');
    expect(withRequestId(undefined, () => currentRequestId())).toBeUndefined();
  });
});
