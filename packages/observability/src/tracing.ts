import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanKind,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export { SpanKind } from '@opentelemetry/api';
export type { Span } from '@opentelemetry/api';

/*
 * OpenTelemetry traces, off unless the standard variables turn them on (docs/observability.md,
 * "Traces"). Spans are made by hand at the few places a request crosses a process (HTTP in,
 * HTTP out, the bus, the model node, the webhook): no module patching, which ESM makes fragile,
 * and nothing at all on the hot path while tracing is off (the API's no-op tracer).
 */

const TRACER_NAME = 'inference-gateway';
const EXPORTERS = ['otlp', 'console', 'none'] as const;
type ExporterName = (typeof EXPORTERS)[number];

/**
 * The standard variables the services' tracing reads (beside their own configuration schema,
 * which does not repeat them): the SDK's switch and exporter, resource, sampler, OTLP exporter
 * and batch processor settings.
 */
export const TRACING_VARIABLES = [
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_CERTIFICATE',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
] as const;

export interface TracingOptions {
  /** `service.name` unless `OTEL_SERVICE_NAME` says otherwise. */
  service: string;
  env?: NodeJS.ProcessEnv;
  /** Tests: export here (e.g. an in-memory exporter) instead of what the variables say. */
  exporters?: SpanExporter[];
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is buffered (bounded by `OTEL_BSP_EXPORT_TIMEOUT`) and stops. */
  shutdown(): Promise<void>;
}

let active = false;

/** True once `startTracing` registered a provider in this process. */
export function tracingEnabled(): boolean {
  return active;
}

/**
 * Which exporters the variables ask for. Unlike the OpenTelemetry default (`otlp`), an unset
 * `OTEL_TRACES_EXPORTER` means none: the "off by default", and no process sends
 * anything anywhere it was not told to.
 */
export function traceExportersFromEnv(env: NodeJS.ProcessEnv): ExporterName[] {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return [];
  const names = (env.OTEL_TRACES_EXPORTER ?? 'none')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!(EXPORTERS as readonly string[]).includes(name)) {
      throw new Error(`OTEL_TRACES_EXPORTER: unknown exporter "${name}" (otlp, console or none)`);
    }
  }
  return names.filter((name): name is ExporterName => name !== 'none');
}

function positiveIntFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name}: a positive integer`);
  return value;
}

/** The batch processor's bounds from the standard `OTEL_BSP_*` variables. */
function batchProcessor(exporter: SpanExporter, env: NodeJS.ProcessEnv): SpanProcessor {
  return new BatchSpanProcessor(exporter, {
    scheduledDelayMillis: positiveIntFromEnv(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000),
    exportTimeoutMillis: positiveIntFromEnv(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
    maxQueueSize: positiveIntFromEnv(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048),
    maxExportBatchSize: positiveIntFromEnv(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
  });
}

function processorsFor(options: TracingOptions, env: NodeJS.ProcessEnv): SpanProcessor[] {
  if (options.exporters)
    return options.exporters.map((exporter) => new SimpleSpanProcessor(exporter));
  return traceExportersFromEnv(env).map((name) =>
    name === 'otlp'
      ? // Endpoint, headers, timeout and TLS files from OTEL_EXPORTER_OTLP_*; OTLP over HTTP/JSON.
        batchProcessor(new OTLPTraceExporter(), env)
      : new SimpleSpanProcessor(new ConsoleSpanExporter()),
  );
}

/**
 * Registers the process's tracer provider when the variables (or `exporters`) ask for one; the
 * first thing a service's `main` does. The propagator is W3C trace context alone: baggage a
 * client sends is not forwarded to billing, the workers or the model nodes.
 */
export function startTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  const spanProcessors = processorsFor(options, env);
  if (spanProcessors.length === 0) return { enabled: false, shutdown: async () => {} };
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.service }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  active = true;
  return {
    enabled: true,
    shutdown: async () => {
      active = false;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The trace context carried by `headers` (`traceparent`, `tracestate`), or none. */
export function contextFromHeaders(headers: Record<string, unknown>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, {
    get: (carrier, key) => {
      const value = carrier[key];
      return typeof value === 'string' ? value : undefined;
    },
    keys: (carrier) => Object.keys(carrier),
  });
}

/** Adds the current trace context (`traceparent`, `tracestate`) to outgoing `headers`. */
export function injectTraceContext(headers: Record<string, string>, ctx = context.active()): void {
  propagation.inject(ctx, headers);
}

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Attributes;
  /** The parent's context; the active one by default. */
  parent?: Context;
}

/**
 * Runs `work` inside a new span, made current so that calls it makes are its children. A
 * throw marks the span as an error (the exception's type only: messages can carry request
 * data) and is rethrown.
 */
export async function withSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const { span, context: current } = startSpan(name, options);
  try {
    return await context.with(current, () => work(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** Starts a span the caller ends (a server span ends when the response is sent). */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } {
  const parent = options.parent ?? context.active();
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `work` with `ctx` as the current context (a server span around the rest of a request). */
export function runInContext<T>(ctx: Context, work: () => T): T {
  return context.with(ctx, work);
}

/** Keeps `ctx` current in the listeners of `emitter` (a request's body stream, its response). */
export function bindToContext<T extends object>(ctx: Context, emitter: T): T {
  return context.bind(ctx, emitter);
}

export function markSpanFailed(span: Span, reason: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
}

function errorType(error: unknown): string {
  if (error instanceof Error) return (error as { code?: unknown }).code?.toString() ?? error.name;
  return typeof error;
}

/**
 * `trace_id` and `span_id` of the current span, for every log line written inside it (pino's
 * mixin); nothing when tracing is off or outside a span.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  if (!active) return {};
  const spanContext = trace.getSpan(context.active())?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
