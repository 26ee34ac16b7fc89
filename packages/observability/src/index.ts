export { createLogger, REDACTED_PATHS, type Logger, type LoggerOptions } from './logger.js';
export { createServiceMetrics, metricPrefix, type ServiceMetrics } from './metrics.js';
