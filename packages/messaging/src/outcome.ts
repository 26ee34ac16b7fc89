import type { BusLogger, Delivery, Handler, Outcome } from './bus.js';
import type { QueueDeclaration } from './topology-plan.js';

/**
 * What to do with a delivery once its handler decided; shared so both buses agree exactly.
 * `dead-letter` means "reject without requeue": the queue's dead-letter exchange takes it to
 * `<queue>.dead`, or, for a queue without one (transient), the message is dropped.
 */
export type Settlement =
  | { kind: 'ack' }
  | { kind: 'requeue' }
  | { kind: 'dead-letter' }
  | { kind: 'retry'; queue: string; retries: number };

const OUTCOMES: readonly string[] = ['ack', 'requeue', 'retry', 'dead-letter'];

export function settlementFor(
  outcome: Outcome,
  retries: number,
  queue: QueueDeclaration | undefined,
): Settlement {
  if (outcome !== 'retry') return { kind: outcome };
  // No retry queue, or retries used up: the message has had its chances.
  const retry = queue?.retry;
  if (!retry || retries >= retry.maxRetries) return { kind: 'dead-letter' };
  return { kind: 'retry', queue: retry.queue, retries: retries + 1 };
}

/** Runs a handler; a throw or a non-Outcome result counts as `requeue`, never a crash. */
export async function decide<T>(
  handler: Handler<T>,
  delivery: Delivery<T>,
  logger: BusLogger,
): Promise<Outcome> {
  const context = describe(delivery);
  try {
    const outcome = await handler(delivery);
    if (OUTCOMES.includes(outcome)) return outcome;
    logger.warn({ ...context, outcome: String(outcome) }, 'handler returned no outcome; requeue');
  } catch (error) {
    logger.error({ ...context, err: errorSummary(error) }, 'handler failed; requeue');
  }
  return 'requeue';
}

/** What may be logged about a delivery: never its body or headers (prompts, user data). */
export function describe(delivery: Delivery<unknown>): Record<string, unknown> {
  return {
    queue: delivery.queue,
    messageId: delivery.messageId,
    deliveryCount: delivery.deliveryCount,
    retries: delivery.retries,
  };
}

export function errorSummary(error: unknown): { name: string; message: string; stack?: string } {
  if (error instanceof Error)
    return { name: error.name, message: error.message, stack: error.stack };
  return { name: 'NonError', message: String(error) };
}

/**
 * Settles with `promise`, or rejects with `onTimeout()` after `timeoutMs`. The timer is always
 * cleared, so a pending wait never keeps the process alive; a late rejection is swallowed.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  onTimeout: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, timeoutMs));
  });
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Waits for `promise` to settle, at most `timeoutMs`; never rejects (best-effort steps). */
export async function settleWithin(promise: Promise<unknown>, timeoutMs: number): Promise<void> {
  await withTimeout(promise, timeoutMs, () => new Error('timed out')).catch(() => {});
}

/** Counts running handlers so that cancel/close can wait for them, up to a bound. */
export class InFlight {
  private count = 0;
  private idleWaiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  /** Marks one handler as running; call the returned function exactly once when it ends. */
  enter(): () => void {
    this.count += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.count -= 1;
      if (this.count === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    };
  }

  /** True when idle within `timeoutMs`, false when handlers were still running. */
  async waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return true;
    let wake: () => void = () => {};
    const idle = new Promise<void>((resolve) => {
      wake = resolve;
      this.idleWaiters.push(resolve);
    });
    try {
      await withTimeout(idle, timeoutMs, () => new Error('in-flight handlers still running'));
      return true;
    } catch {
      this.idleWaiters = this.idleWaiters.filter((w) => w !== wake);
      return false;
    }
  }
}
