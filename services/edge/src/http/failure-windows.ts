import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';

/** Addresses with a window open that one edge process keeps by default (about 26 MB, measured). */
export const DEFAULT_FAILURE_ADDRESSES_MAX = 50_000;

export interface FailureWindowsOptions {
  /** Failures an address may have in one window. */
  points: number;
  windowS: number;
  /** Addresses with a window open, at most; past it the window that ends first is dropped. */
  addressesMax: number;
  now?: () => number;
}

/**
 * Failed authentications per client address, in fixed windows (rate-limiter-flexible counts),
 * for at most `addressesMax` addresses. The library keeps one entry per address until its
 * window ends, so without a bound a client rotating through its addresses (a /48 of IPv6 holds
 * 65,536 of the /64s `clientKey` counts by) grows edge's memory with every one. Past the bound
 * the window that ends first is forgotten: that address may fail again sooner, which only a
 * client with more addresses than the bound can cause, and such a client is not slowed by a
 * per-address limit anyway.
 */
export class FailureWindows {
  readonly #limiter: RateLimiterMemory;
  /**
   * When each open window ends. Windows all last `windowS` and are added as they open, so the
   * Map's order (insertion) is also the order in which they end: the first entry ends first.
   */
  readonly #ends = new Map<string, number>();
  readonly #addressesMax: number;
  readonly #now: () => number;

  constructor(options: FailureWindowsOptions) {
    this.#limiter = new RateLimiterMemory({ points: options.points, duration: options.windowS });
    this.#addressesMax = options.addressesMax;
    this.#now = options.now ?? Date.now;
  }

  /** Addresses with a window open (at most `addressesMax`). */
  get addresses(): number {
    return this.#ends.size;
  }

  /** The address's window, or null when it has none open. */
  get(key: string): Promise<RateLimiterRes | null> {
    return this.#limiter.get(key);
  }

  /** Counts one failure. */
  async penalty(key: string): Promise<void> {
    this.#opened(key, await this.#limiter.penalty(key, 1));
  }

  /** Takes a point, or rejects with the window (RateLimiterRes) when none is left. */
  async consume(key: string): Promise<void> {
    this.#opened(key, await this.#limiter.consume(key, 1));
  }

  /** Gives a point back. */
  async reward(key: string): Promise<void> {
    await this.#limiter.reward(key, 1);
  }

  #opened(key: string, window: RateLimiterRes): void {
    const now = this.#now();
    const end = this.#ends.get(key);
    if (end !== undefined && end > now) return;
    this.#ends.delete(key);
    this.#ends.set(key, now + window.msBeforeNext);
    for (const [first, firstEnd] of this.#ends) {
      const ended = firstEnd <= now;
      if (!ended && this.#ends.size <= this.#addressesMax) break;
      this.#ends.delete(first);
      if (!ended) void this.#limiter.delete(first);
    }
  }
}
