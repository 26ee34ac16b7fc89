import type { RateLimitDecision } from '@gateway/contracts';
import {
  decideTokens,
  decideWindows,
  RATE_LIMIT_WINDOW_MS,
  rateLimitError,
  requestWindows,
  tokenWindows,
  windowStartMs,
} from '@gateway/ledger-calls';
import type { Clock, Principal } from '../identity/types.js';
import type { RateSubject, RateLimitRepository } from './rate-limit-repository.js';

export const DEFAULT_PRUNE_BATCH = 1_000;
export { RATE_LIMIT_WINDOW_MS, rateLimitError };

/**
 * Fixed one-minute windows, counted in PostgreSQL with atomic upserts (`INSERT ... ON CONFLICT
 * DO UPDATE ... RETURNING`), so counts are exact however many billing replicas (and edges behind
 * them) serve the account: the account's window, and an API key's or scoped token's own when it
 * has a limit (a key's limits cover the tokens it signs). Every request counts
 * in every window that applies, rejected ones included. Window boundaries come from the injected
 * clock (replicas are expected to keep their clocks in sync, e.g. NTP; skew only shifts which
 * window a request near a boundary falls in).
 *
 * Old windows are pruned: an owner's older windows when its first request of a new window
 * arrives (so an active one has at most two rows), and `prune()` in bounded batches for the
 * quiet ones.
 */
export class RateLimiter {
  readonly #windows: RateLimitRepository;
  readonly #clock: Clock;
  readonly #windowMs: number;

  constructor(deps: { windows: RateLimitRepository; clock: Clock; windowMs?: number }) {
    this.#windows = deps.windows;
    this.#clock = deps.clock;
    this.#windowMs = deps.windowMs ?? RATE_LIMIT_WINDOW_MS;
  }

  /** Counts one request; `allowed` is false once any window's count exceeds its limit. */
  async consume(subject: RateSubject): Promise<RateLimitDecision> {
    const nowMs = this.#clock().getTime();
    const windowStartMs = this.#windowStart(nowMs);
    const counts = await this.#windows.count(subject, windowStartMs);
    if (counts.account === 1) await this.#windows.pruneAccount(subject.accountId, windowStartMs);
    return decideWindows(requestWindows(subject.limit, counts), nowMs, this.#windowMs);
  }

  /**
   * The decision the next request would get, without counting anything, with the tightest
   * tokens-per-minute window as it stands (`GET /v1/key`).
   */
  async peek(subject: RateSubject): Promise<RateLimitDecision> {
    const nowMs = this.#clock().getTime();
    const windowStartMs = this.#windowStart(nowMs);
    const read = await this.#windows.read(subject, windowStartMs);
    const next = (window: { limit: number | null; count: number }) => ({
      ...window,
      count: window.count + 1,
    });
    const counts = { account: read.account + 1, key: next(read.key), token: next(read.token) };
    const decision = decideWindows(requestWindows(subject.limit, counts), nowMs, this.#windowMs);
    const request = { tokens: 0n, counted: false, nowMs };
    const tokens = decideTokens(tokenWindows(read.tokens), request, this.#windowMs);
    return tokens ? { ...decision, tokens: tokens.tokens } : decision;
  }

  #windowStart(nowMs: number): number {
    return windowStartMs(nowMs, this.#windowMs);
  }

  /** Like consume, but throws 429 `rate_limit_exceeded` when the request is over a limit. */
  async enforce(subject: RateSubject): Promise<RateLimitDecision> {
    const decision = await this.consume(subject);
    if (!decision.allowed) throw rateLimitError(decision);
    return decision;
  }

  /** Deletes up to `batch` rows per counter table that ended before the previous window. */
  prune(batch = DEFAULT_PRUNE_BATCH): Promise<number> {
    const currentStartMs = this.#windowStart(this.#clock().getTime());
    return this.#windows.prune(currentStartMs - this.#windowMs, batch);
  }
}

/** Whose windows a principal's request counts in. */
export function rateSubjectOf(principal: Principal): RateSubject {
  return {
    accountId: principal.accountId,
    limit: principal.rateLimitPerMinute,
    apiKeyName: principal.apiKeyName,
    tokenId: principal.token?.id ?? null,
  };
}
