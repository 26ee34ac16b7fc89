import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { traceHttpRequests } from './http-tracing.js';
import { createLogger } from './logger.js';
import {
  contextFromHeaders,
  injectTraceContext,
  SpanKind,
  startTracing,
  traceExportersFromEnv,
  traceFields,
  tracingEnabled,
  withSpan,
  type Tracing,
} from './tracing.js';

describe('traceExportersFromEnv', () => {
  it('is off unless OTEL_TRACES_EXPORTER names an exporter', () => {
    expect(traceExportersFromEnv({})).toEqual([]);
    expect(traceExportersFromEnv({ OTEL_TRACES_EXPORTER: 'none' })).toEqual([]);
    expect(traceExportersFromEnv({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual(['otlp']);
    expect(traceExportersFromEnv({ OTEL_TRACES_EXPORTER: ' OTLP , console' })).toEqual([
      'otlp',
      'console',
    ]);
  });

  it('is off when OTEL_SDK_DISABLED is true, whatever the exporter', () => {
    expect(
      traceExportersFromEnv({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }),
    ).toEqual([]);
  });

  it('refuses an exporter it does not have, naming it', () => {
    expect(() => traceExportersFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      'OTEL_TRACES_EXPORTER: unknown exporter "zipkin"',
    );
  });
});

describe('tracing off', () => {
  it('registers nothing: no trace context goes out, no ids in log lines', async () => {
    const tracing = startTracing({ service: 'test', env: {} });
    expect(tracing.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    const headers: Record<string, string> = {};
    await withSpan('work', { kind: SpanKind.INTERNAL }, async () => {
      injectTraceContext(headers);
      expect(traceFields()).toEqual({});
    });
    expect(headers).toEqual({});
  });
});

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    tracing = startTracing({ service: 'unit', exporters: [exporter] });
    const traced = traceHttpRequests(() => ({ route: '/things/:id', requestId: 'req-1' }));
    server = createServer((req, res) =>
      traced(req, res, () => {
        // Runs inside the server span: what it does is the span's child.
        void withSpan('inner', { kind: SpanKind.INTERNAL }, async () => {
          res.writeHead(503).end();
        });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await tracing.shutdown();
    expect(tracingEnabled()).toBe(false);
  });

  it('carries trace context in headers and back, child spans under their parent', async () => {
    const headers: Record<string, string> = {};
    let outerIds: { traceId: string; spanId: string } | undefined;
    await withSpan('outer', { kind: SpanKind.PRODUCER }, async (outer) => {
      outerIds = outer.spanContext();
      injectTraceContext(headers);
    });
    expect(headers.traceparent).toBe(`00-${outerIds!.traceId}-${outerIds!.spanId}-01`);
    await withSpan(
      'remote',
      { kind: SpanKind.CONSUMER, parent: contextFromHeaders(headers) },
      async () => {},
    );
    const remote = exporter.getFinishedSpans().find((span) => span.name === 'remote')!;
    expect(remote.spanContext().traceId).toBe(outerIds!.traceId);
    expect(remote.parentSpanContext?.spanId).toBe(outerIds!.spanId);
  });

  it('marks a span whose work threw as an error, by the error type only', async () => {
    await expect(
      withSpan('fails', { kind: SpanKind.INTERNAL }, async () => {
        throw new TypeError('prompt text that must not be exported');
      }),
    ).rejects.toThrow(TypeError);
    const failed = exporter.getFinishedSpans().find((span) => span.name === 'fails')!;
    expect(failed.status).toEqual({ code: 2, message: 'TypeError' });
  });

  it("adds the current span's ids to log lines", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = createLogger({ service: 'unit', destination });
    let ids: { traceId: string; spanId: string } | undefined;
    await withSpan('logged', { kind: SpanKind.INTERNAL }, async (span) => {
      ids = span.spanContext();
      logger.info('inside');
    });
    logger.info('outside');
    const [inside, outside] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(inside).toMatchObject({ trace_id: ids!.traceId, span_id: ids!.spanId });
    expect(outside).not.toHaveProperty('trace_id');
  });

  it("makes a SERVER span per HTTP request, the child of the caller's traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    const status = await new Promise<number>((resolve, reject) => {
      request(
        {
          host: '127.0.0.1',
          port,
          path: '/things/42?secret=1',
          headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(503);
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const serverSpan = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(serverSpan.name).toBe('GET /things/:id');
    expect(serverSpan.parentSpanContext?.spanId).toBe(callerSpanId);
    expect(serverSpan.attributes).toMatchObject({
      'http.route': '/things/:id',
      'http.response.status_code': 503,
      'gateway.request_id': 'req-1',
    });
    expect(serverSpan.status.code).toBe(2);
    const inner = spans.find((span) => span.name === 'inner')!;
    expect(inner.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
  });
});
