/**
 * The retry rules of decisions §3, as pure functions (clock and randomness come in).
 * A schedule lists the delay before each attempt, the first included; its length is the
 * number of attempts a delivery gets.
 */

/** What one attempt came to, as the outbound client saw it. */
export interface AttemptResult {
  /** HTTP status, or null when no response arrived. */
  statusCode: number | null;
  latencyMs: number;
  /**
   * Why no response arrived: a timeout or network error (retried), or `refused`: the request
   * could not be sent at all (destination policy, malformed URL), which no retry changes.
   */
  failure: 'timeout' | 'network' | 'refused' | null;
  /** From a `Retry-After` header on a 429 or 503. */
  retryAfterMs: number | null;
  /** Short description for the attempt log (never response content). */
  detail: string | null;
}

export type Verdict =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; delayMs: number; error: string }
  | { outcome: 'failed'; error: string }
  | { outcome: 'dropped'; error: string };

export interface RetryPolicy {
  delaysMs: readonly number[];
  /** Up to this fraction is added to every delay (0.1 = up to +10%). */
  jitterRatio: number;
  random: () => number;
}

export const jitteredMs = (delayMs: number, policy: RetryPolicy): number =>
  Math.round(delayMs * (1 + policy.jitterRatio * policy.random()));

/** Delay before the first attempt of a new delivery. */
export const firstDelayMs = (policy: RetryPolicy): number =>
  jitteredMs(policy.delaysMs[0] ?? 0, policy);

function describeFailure(result: AttemptResult): string {
  if (result.failure !== null) return result.detail ?? result.failure;
  const code = result.statusCode;
  if (code !== null && code >= 300 && code < 400) return `redirect not followed (HTTP ${code})`;
  return `HTTP ${code}`;
}

/** 2xx delivers; 408, 429, 5xx, timeouts and network errors retry; everything else fails. */
export function isRetryable(result: AttemptResult): boolean {
  if (result.failure === 'timeout' || result.failure === 'network') return true;
  const code = result.statusCode;
  return code === 408 || code === 429 || (code !== null && code >= 500 && code <= 599);
}

const isSuccess = ({ failure, statusCode }: AttemptResult): boolean =>
  failure === null && statusCode !== null && statusCode >= 200 && statusCode < 300;

/**
 * Decides what follows attempt number `roundAttempt` (1-based, counted since the delivery was
 * queued or redelivered). `Retry-After` can lengthen a delay up to the schedule's longest step,
 * so a single answer cannot park a delivery beyond its retention.
 */
export function decide(result: AttemptResult, roundAttempt: number, policy: RetryPolicy): Verdict {
  if (isSuccess(result)) return { outcome: 'delivered' };
  const error = describeFailure(result);
  if (!isRetryable(result)) return { outcome: 'failed', error };
  const nextDelayMs = policy.delaysMs[roundAttempt];
  if (nextDelayMs === undefined) return { outcome: 'dropped', error };
  let delayMs = jitteredMs(nextDelayMs, policy);
  if (result.retryAfterMs !== null) {
    const capMs = Math.max(...policy.delaysMs);
    delayMs = Math.max(delayMs, Math.min(result.retryAfterMs, capMs));
  }
  return { outcome: 'retry', delayMs, error };
}

/** `Retry-After: <seconds>` or an HTTP date; anything else is ignored. */
export function parseRetryAfterMs(header: string | undefined, nowMs: number): number | null {
  if (header === undefined) return null;
  const text = header.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const dateMs = Date.parse(text);
  if (Number.isNaN(dateMs) || !/[a-z]/i.test(text)) return null;
  return Math.max(0, dateMs - nowMs);
}
