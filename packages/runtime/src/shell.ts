import type { Express } from 'express';
import {
  createLogger,
  createServiceMetrics,
  type Logger,
  type ServiceMetrics,
} from '@gateway/observability';
import { listen, type RunningServer } from './http-server.js';
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
  const logger = createLogger({ service: name, level: config.LOG_LEVEL });
  const metrics = createServiceMetrics(name);
  if (options.embedded) {
    // Several services in one process (local mode): the host owns signals and the exit.
    const lifecycle = new Lifecycle({
      logger,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      exit: () => {},
    });
    return { name, logger, metrics, lifecycle };
  }
  const lifecycle = new Lifecycle({ logger, shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS });
  lifecycle.installSignalHandlers();
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection');
    void lifecycle.shutdown('unhandled promise rejection');
  });
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    void lifecycle.shutdown('uncaught exception');
  });
  return { name, logger, metrics, lifecycle };
}

/**
 * Listens, logs the bound port (tests start services on port 0 and read it from here) and
 * registers the HTTP drain as a shutdown step: call it before registering the other steps, so
 * a stopping service first stops accepting requests. Draining gets half the shutdown budget.
 */
export async function serveHttp(
  shell: ServiceShell,
  app: Express,
  config: { HOST: string; PORT: number; SHUTDOWN_TIMEOUT_MS: number },
): Promise<RunningServer> {
  const running = await listen(app, config.HOST, config.PORT);
  shell.logger.info({ host: config.HOST, port: running.port }, 'listening');
  shell.lifecycle.onShutdown('http', () => running.close(config.SHUTDOWN_TIMEOUT_MS / 2));
  return running;
}
