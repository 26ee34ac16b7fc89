/*
 * What edge must tell billing about a hold even when billing does not answer at that moment
 * (PostgreSQL stalled or failing over): the call is retried in the background, bounded in
 * attempts and in the number retried at once, and given up when edge stops.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import { GatewayError } from '@gateway/contracts';

export interface BillingRetriesOptions {
  /** Background attempts after the first failed one, with exponential backoff between them. */
  retries?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Calls retried in the background at once; past this, a call is not retried. */
  maxPending?: number;
}

/** With the defaults, the background attempts span about five minutes. */
const DEFAULT_RETRIES = 12;
const DEFAULT_MIN_BACKOFF_MS = 1_000;
const DEFAULT_MAX_BACKOFF_MS = 30_000;
const DEFAULT_MAX_PENDING = 10_000;

export class BillingRetries {
  readonly #options: BillingRetriesOptions;
  readonly #stopping = new AbortController();
  #pending = 0;

  constructor(options: BillingRetriesOptions = {}) {
    this.#options = options;
  }

  /** Calls retried in the background now (for tests and metrics). */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Retries `attempt`, whose first try just failed with billing away, in the background while
   * billing stays away; its outcome settles the promise. Undefined when not taken: too many are
   * pending, or edge is stopping.
   */
  retry<T>(attempt: () => Promise<T>): Promise<T> | undefined {
    const maxPending = this.#options.maxPending ?? DEFAULT_MAX_PENDING;
    if (this.#pending >= maxPending || this.#stopping.signal.aborted) return undefined;
    this.#pending += 1;
    return this.#retry(attempt).finally(() => {
      this.#pending -= 1;
    });
  }

  /** Ends the background retries (edge is stopping). */
  stop(): void {
    this.#stopping.abort();
  }

  async #retry<T>(attempt: () => Promise<T>): Promise<T> {
    const minBackoffMs = this.#options.minBackoffMs ?? DEFAULT_MIN_BACKOFF_MS;
    const signal = this.#stopping.signal;
    // The first attempt just failed (after the billing client's own retries): wait first.
    await delay(minBackoffMs, undefined, { signal, ref: false });
    return pRetry(attempt, {
      retries: this.#options.retries ?? DEFAULT_RETRIES,
      minTimeout: minBackoffMs,
      maxTimeout: this.#options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS,
      factor: 2,
      randomize: true,
      signal,
      // A timer must not keep a stopping process alive.
      unref: true,
      shouldRetry: ({ error }) => billingAway(error),
    });
  }
}

/** Billing did not answer (unreachable, too slow, failing): the same call may work later. */
export function billingAway(error: unknown): boolean {
  return !(error instanceof GatewayError) || error.status >= 500;
}
