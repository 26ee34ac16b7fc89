export { createLogger, REDACTED_PATHS, type Logger, type LoggerOptions } from './logger.js';
export {
  billingBatchSizes,
  createServiceMetrics,
  metricPrefix,
  sampledGauge,
  settledMicroDzdCounter,
  type ServiceMetrics,
} from './metrics.js';
export {
  bindToContext,
  contextFromHeaders,
  injectTraceContext,
  markSpanFailed,
  runInContext,
  SpanKind,
  startSpan,
  startTracing,
  traceExportersFromEnv,
  TRACING_VARIABLES,
  traceFields,
  tracingEnabled,
  withSpan,
  type Span,
  type SpanOptions,
  type Tracing,
  type TracingOptions,
} from './tracing.js';
export { traceHttpRequests } from './http-tracing.js';
