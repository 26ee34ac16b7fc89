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
