import { GatewayError } from '@gateway/contracts';
import { hashPassword, verifyPassword, type ScryptParams } from './passwords.js';

export interface PasswordWorkLimits {
  /** Password checks and hashes run at once (`DASHBOARD_PASSWORD_HASHES_AT_ONCE`). */
  atOnce: number;
  /** How many more may wait for a turn (`DASHBOARD_PASSWORD_HASH_QUEUE`); beyond that, 503. */
  queue: number;
}

export const DEFAULT_PASSWORD_WORK_LIMITS: PasswordWorkLimits = { atOnce: 1, queue: 4 };

export type PasswordWorkEvent = 'hashed' | 'refused';

/**
 * The bulkhead around dashboard password work. One scrypt hash takes 32 MiB and about
 * 0.1 s of a core (on libuv's thread pool, 4 threads shared with the rest of billing): unbounded,
 * a flood of sign-ins queued hundreds of hashes and every call behind them waited. Here at most
 * `atOnce` pieces of password work run, at most `queue` wait for a turn, and anything more is
 * refused at once with 503 `service_unavailable` and `Retry-After: 1` (no hash, no database
 * statement). Per billing process.
 *
 * A turn covers what a sign-in does before and around its hash (take the email's point, read
 * the user, verify), so the hash runs only after the point was granted.
 */
export class PasswordWork {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    readonly limits: PasswordWorkLimits = DEFAULT_PASSWORD_WORK_LIMITS,
    private readonly scrypt?: ScryptParams,
    private readonly onEvent: (event: PasswordWorkEvent) => void = () => {},
  ) {
    if (!(limits.atOnce >= 1 && limits.queue >= 0)) {
      throw new Error('password work needs at least one turn at once and a queue of 0 or more');
    }
  }

  /** Work running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  /** Runs `work` in a turn: now, after a wait in the queue, or not at all (503) when it is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running < this.limits.atOnce) {
      this.#running += 1;
    } else if (this.#waiting.length < this.limits.queue) {
      // The turn is handed over by the work that finishes (`#running` stays as it is).
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.onEvent('refused');
      throw new GatewayError(
        'service_unavailable',
        'Too many sign-ins are being checked right now; retry shortly',
        { details: { retryAfterS: 1 } },
      );
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }

  /** A new password's hash; call inside `run`. */
  async hash(password: string): Promise<string> {
    this.onEvent('hashed');
    return hashPassword(password, this.scrypt);
  }

  /** Checks a password (an unknown user's against a decoy, same work); call inside `run`. */
  async verify(password: string, stored: string | null): Promise<boolean> {
    this.onEvent('hashed');
    return verifyPassword(password, stored);
  }
}
