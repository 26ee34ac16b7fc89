import { GatewayError } from '@gateway/contracts';
import type { RateLimitDecision, RateLimitScope, TokenRateLimit } from '@gateway/contracts';
import type { Clock, Principal } from '../identity/types.js';
import type {
  RateSubject,
  RateLimitRepository,
  RequestCounts,
  TokenWindows,
} from './rate-limit-repository.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;
export const DEFAULT_PRUNE_BATCH = 1_000;

/** One window a request counts in: whose, its count (this request included), its limit. */
export interface RequestWindow {
  scope: RateLimitScope;
  count: number;
  limit: number;
}

/** A tokens-per-minute window: whose, what is used in it (this request excluded), its limit. */
export interface TokenWindow {
  scope: Exclude<RateLimitScope, 'account'>;
  usedTokens: bigint;
  limitTokens: bigint;
}

/** The tightest tokens-per-minute window, and the one that refused the request if any. */
export interface TokenDecision {
  tokens: TokenRateLimit;
  refusal?: TokenWindow;
}

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
    return this.decideWindows(requestWindows(subject.limit, counts), nowMs);
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
    const decision = this.decideWindows(requestWindows(subject.limit, counts), nowMs);
    const tokens = this.decideTokens(tokenWindows(read.tokens), 0n, false, nowMs);
    return tokens ? { ...decision, tokens: tokens.tokens } : decision;
  }

  #windowStart(nowMs: number): number {
    return Math.floor(nowMs / this.#windowMs) * this.#windowMs;
  }

  /** The start of the window `nowMs` falls in. */
  windowStartMs(nowMs: number): number {
    return this.#windowStart(nowMs);
  }

  /**
   * The decision for windows counted elsewhere (admission counts in SQL): refused when any is
   * over its limit, and the headers report the tightest (the refusing one, else the one with the
   * fewest requests left; the account's on a tie). `scope` is set only when it is not the
   * account's, so the account-only decision keeps its shape.
   */
  decideWindows(windows: readonly RequestWindow[], nowMs: number): RateLimitDecision {
    const tightest = windows.reduce((best, window) => {
      const over = window.count > window.limit;
      if (over !== best.count > best.limit) return over ? window : best;
      const left = window.limit - window.count;
      return left < best.limit - best.count ? window : best;
    });
    const decision = rateLimitDecision({
      count: tightest.count,
      limit: tightest.limit,
      windowStartMs: this.#windowStart(nowMs),
      nowMs,
      windowMs: this.#windowMs,
    });
    return tightest.scope === 'account' ? decision : { ...decision, scope: tightest.scope };
  }

  /**
   * Tokens per minute: whether `requestTokens` fit in every window, and the tightest after them
   * (`counted`: the request was admitted, its tokens are in the windows now). Undefined when
   * no tokens-per-minute limit applies.
   */
  decideTokens(
    windows: readonly TokenWindow[],
    requestTokens: bigint,
    counted: boolean,
    nowMs: number,
  ): TokenDecision | undefined {
    if (windows.length === 0) return undefined;
    const left = (w: TokenWindow) => w.limitTokens - w.usedTokens - (counted ? requestTokens : 0n);
    const refusal = counted
      ? undefined
      : windows.find((w) => w.usedTokens + requestTokens > w.limitTokens);
    const tightest = refusal ?? windows.reduce((best, w) => (left(w) < left(best) ? w : best));
    const resetMs = this.#windowStart(nowMs) + this.#windowMs;
    const remaining = left(tightest) < 0n ? 0 : Number(left(tightest));
    const tokens = { limit: Number(tightest.limitTokens), remaining, resetMs };
    return refusal ? { tokens, refusal } : { tokens };
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

/** The windows a request counted in: the account's, and the key's and token's when limited. */
export function requestWindows(
  accountLimit: number,
  counts: Pick<RequestCounts, 'account' | 'key' | 'token'>,
): RequestWindow[] {
  const windows: RequestWindow[] = [
    { scope: 'account', count: counts.account, limit: accountLimit },
  ];
  if (counts.key.limit !== null) {
    windows.push({ scope: 'api_key', count: counts.key.count, limit: counts.key.limit });
  }
  if (counts.token.limit !== null) {
    windows.push({ scope: 'scoped_token', count: counts.token.count, limit: counts.token.limit });
  }
  return windows;
}

/** The tokens-per-minute windows that apply (the key's, the token's). */
export function tokenWindows(read: TokenWindows): TokenWindow[] {
  const windows: TokenWindow[] = [];
  if (read.key.limit !== null) {
    windows.push({ scope: 'api_key', usedTokens: read.key.used, limitTokens: read.key.limit });
  }
  if (read.token.limit !== null) {
    windows.push({
      scope: 'scoped_token',
      usedTokens: read.token.used,
      limitTokens: read.token.limit,
    });
  }
  return windows;
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

const WHOSE: Record<RateLimitScope, string> = {
  account: 'Account',
  api_key: 'API key',
  scoped_token: 'Scoped token',
};

/**
 * 429 `rate_limit_exceeded`, naming whose limit. `details` carries `retryAfterS` (read by the
 * runtime's error handler for `Retry-After`) and `limit`, `remaining`, `resetMs` (and `tokens`)
 * for the `X-RateLimit-*` headers.
 */
export function rateLimitError(decision: RateLimitDecision, message?: string): GatewayError {
  return new GatewayError(
    'rate_limit_exceeded',
    message ?? `${WHOSE[decision.scope ?? 'account']} rate limit reached`,
    {
      details: {
        retryAfterS: decision.retryAfterS,
        limit: decision.limit,
        remaining: decision.remaining,
        resetMs: decision.resetMs,
        ...(decision.tokens ? { tokens: decision.tokens } : {}),
      },
    },
  );
}

/**
 * The message of a tokens-per-minute refusal: whose limit, what the request needs and what is
 * left; a request larger than the whole limit is told it can never pass as it is.
 */
export function tokenRateLimitMessage(window: TokenWindow, requestTokens: bigint): string {
  const whose = WHOSE[window.scope];
  if (requestTokens > window.limitTokens) {
    return (
      `${whose} rate limit: this request needs up to ${requestTokens} tokens, more than its ` +
      `limit of ${window.limitTokens} tokens per minute; lower max_tokens (or n)`
    );
  }
  return (
    `${whose} rate limit reached: ${window.usedTokens} of ${window.limitTokens} tokens per ` +
    `minute used, and this request needs up to ${requestTokens}`
  );
}
