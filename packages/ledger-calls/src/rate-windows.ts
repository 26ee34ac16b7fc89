/**
 * The rate limits' window arithmetic, for counts taken in SQL (the admission function counts
 * them; billing's `RateLimiter` for its other routes): fixed windows, which window a time falls
 * in, the decision a set of windows gives, and the 429's wording. Pure: the same numbers give the
 * same decision in billing and in edge (ADR 0070).
 */
import { GatewayError } from '@gateway/contracts';
import type { RateLimitDecision, RateLimitScope, TokenRateLimit } from '@gateway/contracts';

export const RATE_LIMIT_WINDOW_MS = 60_000;

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

/** A window's count (after this request when counted) and its owner's limit (null: none). */
export interface OwnerWindow {
  limit: number | null;
  count: number;
}

/** Tokens used in a window (counted less given back) and the owner's limit (null: none). */
export interface OwnerTokens {
  limit: bigint | null;
  used: bigint;
}

/** The start of the window `nowMs` falls in. */
export function windowStartMs(nowMs: number, windowMs = RATE_LIMIT_WINDOW_MS): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}

/**
 * The decision for windows counted elsewhere: refused when any is over its limit, and the
 * headers report the tightest (the refusing one, else the one with the fewest requests left; the
 * account's on a tie). `scope` is set only when it is not the account's, so the account-only
 * decision keeps its shape.
 */
export function decideWindows(
  windows: readonly RequestWindow[],
  nowMs: number,
  windowMs = RATE_LIMIT_WINDOW_MS,
): RateLimitDecision {
  const tightest = windows.reduce((best, window) => {
    const over = window.count > window.limit;
    if (over !== best.count > best.limit) return over ? window : best;
    const left = window.limit - window.count;
    return left < best.limit - best.count ? window : best;
  });
  const decision = rateLimitDecision({
    count: tightest.count,
    limit: tightest.limit,
    windowStartMs: windowStartMs(nowMs, windowMs),
    nowMs,
    windowMs,
  });
  return tightest.scope === 'account' ? decision : { ...decision, scope: tightest.scope };
}

/**
 * Tokens per minute: whether `requestTokens` fit in every window, and the tightest after them
 * (`counted`: the request was admitted, its tokens are in the windows now). Undefined when
 * no tokens-per-minute limit applies.
 */
export function decideTokens(
  windows: readonly TokenWindow[],
  request: { tokens: bigint; counted: boolean; nowMs: number },
  windowMs = RATE_LIMIT_WINDOW_MS,
): TokenDecision | undefined {
  if (windows.length === 0) return undefined;
  const { tokens: requestTokens, counted, nowMs } = request;
  const left = (w: TokenWindow) => w.limitTokens - w.usedTokens - (counted ? requestTokens : 0n);
  const refusal = counted
    ? undefined
    : windows.find((w) => w.usedTokens + requestTokens > w.limitTokens);
  const tightest = refusal ?? windows.reduce((best, w) => (left(w) < left(best) ? w : best));
  const resetMs = windowStartMs(nowMs, windowMs) + windowMs;
  const remaining = left(tightest) < 0n ? 0 : Number(left(tightest));
  const tokens = { limit: Number(tightest.limitTokens), remaining, resetMs };
  return refusal ? { tokens, refusal } : { tokens };
}

/** The windows a request counted in: the account's, and the key's and token's when limited. */
export function requestWindows(
  accountLimit: number,
  counts: { account: number; key: OwnerWindow; token: OwnerWindow },
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
export function tokenWindows(read: { key: OwnerTokens; token: OwnerTokens }): TokenWindow[] {
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
