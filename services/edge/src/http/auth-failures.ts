import { isIPv6 } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import { GatewayError } from '@gateway/contracts';

/**
 * Failed authentication, limited per client address: guessing keys, replaying dead tokens or
 * hammering without credentials costs a client address at most `failuresPerMinute` refusals a
 * minute; after that it gets 429 without edge asking billing anything. Only failures count, so a
 * busy gateway client (many users behind one NAT) with valid credentials is never limited here;
 * the per-account limit does that. State is per edge replica (in memory): the bound for N
 * replicas is N × the setting, which is enough to make guessing useless.
 */

export interface AuthFailureLimiterOptions {
  failuresPerMinute: number;
  /** Most addresses tracked at once; beyond it the oldest are forgotten (memory is bounded). */
  maxTrackedAddresses?: number;
}

const WINDOW_S = 60;

/** IPv6 clients are counted by their /64: one host owns a whole /64 and can rotate within it. */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4mapped) return v4mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).join(':')}::/64`;
}

const AUTH_FAILURE_CODES = new Set([
  'invalid_api_key',
  'token_expired',
  'token_revoked',
  'unauthorized',
  // Dashboard sign-in and invitation acceptance.
  'invalid_credentials',
  'invalid_invitation',
]);

export class AuthFailureLimiter {
  readonly #limiter: RateLimiterMemory;

  constructor(options: AuthFailureLimiterOptions) {
    this.#limiter = new RateLimiterMemory({
      points: options.failuresPerMinute,
      duration: WINDOW_S,
    });
  }

  /** Refuses an address that used up its failures (429 with Retry-After). */
  readonly guard: RequestHandler = async (req, _res, next) => {
    const state = await this.#limiter.get(clientKey(req.socket.remoteAddress));
    if (state !== null && state.remainingPoints <= 0) {
      next(tooMany(state));
      return;
    }
    next();
  };

  /** Counts `error` against the request's address when it is an authentication failure. */
  async countFailure(req: Request, error: unknown): Promise<void> {
    if (!(error instanceof GatewayError) || !AUTH_FAILURE_CODES.has(error.code)) return;
    await this.#limiter.penalty(clientKey(req.socket.remoteAddress), 1);
  }
}

function tooMany(state: RateLimiterRes): GatewayError {
  return new GatewayError(
    'rate_limit_exceeded',
    'Too many failed authentication attempts from this address; retry later',
    { details: { retryAfterS: Math.max(1, Math.ceil(state.msBeforeNext / 1000)) } },
  );
}
