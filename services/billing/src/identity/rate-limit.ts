import { GatewayError, type RateLimitDecision } from '@gateway/contracts';
import type { IdentityRepository } from './identity-repository.js';
import type { Clock } from './types.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;
export const DEFAULT_PRUNE_BATCH = 1_000;

/**
 * Fixed one-minute windows per account, counted in PostgreSQL with one atomic
 * `INSERT ... ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count`, so the count is exact
 * however many billing replicas (and edges behind them) serve the account. Every request counts,
 * rejected ones included. Window boundaries come from the injected clock (replicas are expected
 * to keep their clocks in sync, e.g. NTP; skew only shifts which window a request near a
 * boundary falls in).
 *
 * Old windows are pruned: an account's older windows when its first request of a new window
 * arrives (so an active account has at most two rows), and `prune()` in bounded batches for
 * accounts that went quiet.
 */
export class RateLimiter {
  readonly #store: IdentityRepository;
  readonly #clock: Clock;
  readonly #windowMs: number;

  constructor(deps: { store: IdentityRepository; clock: Clock; windowMs?: number }) {
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#windowMs = deps.windowMs ?? RATE_LIMIT_WINDOW_MS;
  }

  /** Counts one request; `allowed` is false once the window's count exceeds `limit`. */
  async consume(accountId: string, limit: number): Promise<RateLimitDecision> {
    const nowMs = this.#clock().getTime();
    const windowStartMs = this.#windowStart(nowMs);
    const count = await this.#store.incrementRateWindow(accountId, windowStartMs);
    if (count === 1) await this.#store.pruneAccountRateWindows(accountId, windowStartMs);
    return this.#decision(count, limit, windowStartMs, nowMs);
  }

  /** The decision the next request would get, without counting anything. */
  async peek(accountId: string, limit: number): Promise<RateLimitDecision> {
    const nowMs = this.#clock().getTime();
    const windowStartMs = this.#windowStart(nowMs);
    const count = await this.#store.readRateWindow(accountId, windowStartMs);
    return this.#decision(count + 1, limit, windowStartMs, nowMs);
  }

  #windowStart(nowMs: number): number {
    return Math.floor(nowMs / this.#windowMs) * this.#windowMs;
  }

  #decision(count: number, limit: number, windowStartMs: number, nowMs: number) {
    return rateLimitDecision({ count, limit, windowStartMs, nowMs, windowMs: this.#windowMs });
  }

  /** The start of the window `nowMs` falls in. */
  windowStartMs(nowMs: number): number {
    return this.#windowStart(nowMs);
  }

  /** The decision for a window count read elsewhere (admission counts in SQL). */
  decide(count: number, limit: number, nowMs: number): RateLimitDecision {
    return this.#decision(count, limit, this.#windowStart(nowMs), nowMs);
  }

  /** Like consume, but throws 429 `rate_limit_exceeded` when the request is over the limit. */
  async enforce(accountId: string, limit: number): Promise<RateLimitDecision> {
    const decision = await this.consume(accountId, limit);
    if (!decision.allowed) throw rateLimitError(decision);
    return decision;
  }

  /** Deletes up to `batch` windows that ended before the previous one; returns how many. */
  prune(batch = DEFAULT_PRUNE_BATCH): Promise<number> {
    const nowMs = this.#clock().getTime();
    const currentStartMs = Math.floor(nowMs / this.#windowMs) * this.#windowMs;
    return this.#store.pruneRateWindows(currentStartMs - this.#windowMs, batch);
  }
}

/** The decision for the request that brought the window's count to `count`. */
export function rateLimitDecision(input: {
  count: number;
  limit: number;
  windowStartMs: number;
  nowMs: number;
  windowMs: number;
}): RateLimitDecision {
  const resetMs = input.windowStartMs + input.windowMs;
  return {
    allowed: input.count <= input.limit,
    limit: input.limit,
    remaining: Math.max(0, input.limit - input.count),
    resetMs,
    retryAfterS: Math.max(1, Math.ceil((resetMs - input.nowMs) / 1000)),
  };
}

/**
 * 429 `rate_limit_exceeded`. `details` carries `retryAfterS` (read by the runtime's error handler
 * for `Retry-After`) and `limit`, `remaining`, `resetMs` for the `X-RateLimit-*` headers.
 */
export function rateLimitError(decision: RateLimitDecision): GatewayError {
  return new GatewayError('rate_limit_exceeded', 'Account rate limit reached', {
    details: {
      retryAfterS: decision.retryAfterS,
      limit: decision.limit,
      remaining: decision.remaining,
      resetMs: decision.resetMs,
    },
  });
}
