import type { RequestListener } from 'node:http';
import {
  createLogger,
  createServiceMetrics,
  startTracing,
  type Logger,
  type ServiceMetrics,
} from '@gateway/observability';
import { pino } from 'pino';
import { listen, type ListenOptions, type RunningServer } from './http-server.js';
import { Lifecycle } from './lifecycle.js';

export interface ServiceShell {
  readonly name: string;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  readonly lifecycle: Lifecycle;
}

export interface ShellOptions {
  /**
   * The service runs inside a host process with others (local mode): no signal or process-level
   * handlers, and its shutdown does not exit the process (the host shuts services down in order).
   */
  embedded?: boolean;
}

export interface ShellConfig {
  LOG_LEVEL: string;
  SHUTDOWN_TIMEOUT_MS: number;
}

/**
 * What every composition root needs before its own clients: a logger, a metrics registry,
 * and a lifecycle wired to SIGTERM/SIGINT. An unexpected rejection or exception is logged
 * and shuts the service down cleanly instead of leaving it half-alive.
 */
export function createServiceShell(
  name: string,
  config: ShellConfig,
  options: ShellOptions = {},
): ServiceShell {
  const metrics = createServiceMetrics(name);
  if (options.embedded) {
    const logger = createLogger({ service: name, level: config.LOG_LEVEL });
    // Several services in one process (local mode): the host owns signals and the exit.
    const lifecycle = new Lifecycle({
      logger,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      exit: () => {},
    });
    return { name, logger, metrics, lifecycle };
  }
  // Before anything that makes spans: off unless OTEL_TRACES_EXPORTER asks (docs/observability.md).
  const tracing = startTracing({ service: name });
  const { output, reportDrops } = bufferedStdout();
  const logger = createLogger({ service: name, level: config.LOG_LEVEL, destination: output });
  reportDrops(logger);
  const lifecycle = new Lifecycle({
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    afterSteps: () => tracing.shutdown(),
  });
  lifecycle.installSignalHandlers();
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection');
    void lifecycle.shutdown('unhandled promise rejection', true);
  });
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    void lifecycle.shutdown('uncaught exception', true);
  });
  return { name, logger, metrics, lifecycle };
}

/** Log lines are written when 4 KiB are waiting, and at least every 200 ms. */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 200;
/**
 * The most log output a process holds while its standard output does not take it (a stalled
 * log collector, a full pipe): past it, new lines are dropped and counted, not buffered, so a
 * stalled reader cannot grow the process until it is killed for its memory.
 */
export const LOG_BUFFER_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Standard output for a service's own process, buffered: a write per line was 5–8 % of edge's
 * and the worker's CPU in `pnpm bench` (one syscall each). The price: a process killed with
 * SIGKILL loses at most the last 200 ms of lines; pino writes the rest when the process exits
 * (a shutdown, including after an uncaught exception; tested). Lines dropped past
 * `LOG_BUFFER_MAX_BYTES` are counted, and reported by a warning through the logger at the first
 * flush that finds room for it.
 */
function bufferedStdout(): {
  output: ReturnType<typeof pino.destination>;
  reportDrops(logger: Logger): void;
} {
  const output = pino.destination({
    dest: 1,
    minLength: LOG_BUFFER_BYTES,
    maxLength: LOG_BUFFER_MAX_BYTES,
    sync: false,
  });
  let droppedLines = 0;
  output.on('drop', () => (droppedLines += 1));
  const reportDrops = (logger: Logger) => {
    setInterval(() => {
      if (droppedLines > 0) {
        const lines = droppedLines;
        droppedLines = 0;
        logger.warn({ droppedLines: lines }, 'log output stalled: lines dropped');
        // The warning went into the same buffer (synchronously): dropped too while the buffer
        // is still full, so the count waits for the next flush.
        if (droppedLines > 0) droppedLines = lines;
      }
      output.flush();
    }, LOG_FLUSH_INTERVAL_MS).unref();
  };
  return { output, reportDrops };
}

/**
 * Listens, logs the bound port (tests start services on port 0 and read it from here) and
 * registers the HTTP drain as a shutdown step: call it before registering the other steps, so
 * a stopping service first stops accepting requests. Draining gets half the shutdown budget.
 */
export async function serveHttp(
  shell: ServiceShell,
  app: RequestListener,
  config: { HOST: string; PORT: number; SHUTDOWN_TIMEOUT_MS: number },
  options: ListenOptions = {},
): Promise<RunningServer> {
  const running = await listen(app, config.HOST, config.PORT, options);
  shell.logger.info({ host: config.HOST, port: running.port }, 'listening');
  // Whoever started the process waits for this line: write it now, not with the next buffer.
  shell.logger.flush();
  shell.lifecycle.onShutdown('http', () => running.close(config.SHUTDOWN_TIMEOUT_MS / 2));
  return running;
}
