import { pino, type DestinationStream, type Logger } from 'pino';
import { traceFields, tracingEnabled } from './tracing.js';

export type { Logger } from 'pino';

/**
 * Paths pino must censor. Credentials (authorization headers, API keys, tokens, secrets)
 * and prompts or outputs (messages, input, content, results) never reach a log line.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-internal-token"]',
  'req.headers["x-admin-token"]',
  'res.headers["set-cookie"]',
  ...[
    'authorization',
    'apiKey',
    'api_key',
    'key',
    'token',
    'jwt',
    'secret',
    'password',
    'messages',
    'prompt',
    'input',
    'inputs',
    'content',
    'results',
    'body',
  ].flatMap((field) => [field, `*.${field}`]),
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; stdout by default. Tests pass a stream to inspect output. */
  destination?: DestinationStream;
}

/** JSON lines on stdout, one logger per process, with the service name on every line. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The current span's ids when tracing is on (started before the logger), so a log line
      // leads to its trace; no call per line while it is off.
      ...(tracingEnabled() ? { mixin: traceFields } : {}),
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination,
  );
}
