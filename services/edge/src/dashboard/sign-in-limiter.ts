import { RateLimiterMemory } from 'rate-limiter-flexible';
import { GatewayError } from '@gateway/contracts';

const WINDOW_S = 3_600;

/**
 * Failed dashboard sign-ins per email (lower-cased), on top of the per-address limit all failed
 * authentications share (`AuthFailureLimiter`): guessing one owner's password from many
 * addresses stops after `failuresPerHour`. That email's sign-in then waits for the window to
 * pass (an operator's new invitation sets a new password meanwhile). In memory, per replica.
 */
export class SignInLimiter {
  readonly #limiter: RateLimiterMemory;

  constructor(failuresPerHour: number) {
    this.#limiter = new RateLimiterMemory({ points: failuresPerHour, duration: WINDOW_S });
  }

  static keyOf(email: unknown): string {
    return typeof email === 'string' ? email.trim().toLowerCase().slice(0, 254) : '';
  }

  async guard(email: unknown): Promise<void> {
    const state = await this.#limiter.get(SignInLimiter.keyOf(email));
    if (state !== null && state.remainingPoints <= 0) {
      throw new GatewayError('rate_limit_exceeded', 'Too many failed sign-ins; retry later', {
        details: { retryAfterS: Math.max(1, Math.ceil(state.msBeforeNext / 1000)) },
      });
    }
  }

  async countFailure(email: unknown): Promise<void> {
    await this.#limiter.penalty(SignInLimiter.keyOf(email), 1);
  }
}
