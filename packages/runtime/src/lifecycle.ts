import type { Logger } from '@gateway/observability';

interface ShutdownStep {
  name: string;
  run(): Promise<void>;
}

export interface LifecycleOptions {
  logger: Logger;
  /** Whole shutdown budget; the process exits when it runs out even if a step hangs. */
  shutdownTimeoutMs: number;
  exit?: (code: number) => void;
  /** Runs after every step (the trace exporter's last flush, which must see the last spans). */
  afterSteps?: () => Promise<void>;
}

/**
 * Ordered, bounded shutdown. Steps run in the order they were registered (the composition
 * root registers them as: stop accepting, stop consuming, finish in-flight work, close
 * connections). A failing step is logged and the rest still run; the exit code says so.
 */
export class Lifecycle {
  private readonly steps: ShutdownStep[] = [];
  private stopping: Promise<number> | undefined;

  constructor(private readonly options: LifecycleOptions) {}

  get isShuttingDown(): boolean {
    return this.stopping !== undefined;
  }

  onShutdown(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** SIGTERM (Kubernetes) and SIGINT (Ctrl-C) both shut down cleanly; a second signal is ignored. */
  installSignalHandlers(): void {
    const handle = (signal: NodeJS.Signals) => {
      void this.shutdown(`received ${signal}`);
    };
    process.once('SIGTERM', handle);
    process.once('SIGINT', handle);
  }

  /**
   * Runs the steps once and exits: 1 when a step failed, or when the shutdown is a failure's
   * (`failure`: a crash or a start that could not finish, which an orchestrator must see).
   */
  shutdown(reason: string, failure = false): Promise<number> {
    this.stopping ??= this.runSteps(reason, failure);
    return this.stopping;
  }

  private async runSteps(reason: string, failure: boolean): Promise<number> {
    const { logger, shutdownTimeoutMs } = this.options;
    const exit = this.options.exit ?? ((code: number) => process.exit(code));
    logger.info({ reason, shutdownTimeoutMs }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ shutdownTimeoutMs }, 'shutdown timed out; exiting');
      exit(1);
    }, shutdownTimeoutMs);
    deadline.unref();
    let failed = failure;
    for (const step of this.steps) {
      try {
        await step.run();
      } catch (error) {
        failed = true;
        logger.error({ step: step.name, err: error }, 'shutdown step failed');
      }
    }
    await this.options.afterSteps?.().catch((error: unknown) => {
      logger.error({ err: error }, 'shutdown: flushing traces failed');
    });
    clearTimeout(deadline);
    const code = failed ? 1 : 0;
    logger.info({ code }, 'stopped');
    exit(code);
    return code;
  }
}
