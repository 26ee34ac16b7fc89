/*
 * Authentication at edge: who may call (billing's answer, or a Bearer credential checked later by
 * the admission) and the failed-authentication limit per client address that runs before it.
 */
import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import type { RateLimiterRes } from 'rate-limiter-flexible';
import type { BillingClient } from '@gateway/billing-client';
import { GatewayError, type Caller } from '@gateway/contracts';
import { applyRateLimit, callerOf, stateOf } from './context.js';
import { DEFAULT_FAILURE_ADDRESSES_MAX, FailureWindows } from './failure-windows.js';

/*
 * Who may call, in as few billing calls as possible. Routes that place no hold authenticate
 * first (one call, which also counts the request against the account's rate limit), before the
 * body is read. Inference routes authenticate with their admission (one call for everything
 * before the job): here they only check that a credential was sent. Every authentication
 * failure counts against the client's address (`AuthFailureLimiter`, below), whose guard runs
 * first.
 */

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The request's Bearer credential (API key, scoped token or admin token), if it sent one. */
export function credentialOf(req: Request): string | undefined {
  return BEARER.exec(req.get('Authorization') ?? '')?.[1];
}

const REFUSED_CREDENTIAL_CODES = new Set([
  'invalid_api_key',
  'token_expired',
  'token_revoked',
  'account_suspended',
]);

/** Whether billing refused the credential itself (not the request). */
export function isAuthFailure(error: unknown): boolean {
  return error instanceof GatewayError && REFUSED_CREDENTIAL_CODES.has(error.code);
}

/**
 * After billing refused a request that carried a credential: an authentication failure counts
 * against the address; a refusal carrying the account's rate-limit decision (429, or an
 * admission refused after it was counted) means billing accepted the credential.
 */
export async function noteAuthentication(
  req: Request,
  res: Response,
  failures: AuthFailureLimiter,
  error: unknown,
): Promise<void> {
  if (isAuthFailure(error)) {
    stateOf(res).authFailed = true;
    await failures.countFailure(req, error);
    return;
  }
  if (error instanceof GatewayError && error.details?.rateLimit !== undefined) {
    failures.accepted(req);
  }
}

/** Routes that place no hold: authenticate and count the request, one billing call. */
export function authenticate(billing: BillingClient, failures: AuthFailureLimiter): RequestHandler {
  return async (req, res, next) => {
    try {
      const { caller, rateLimit } = await billing.authenticate(req.get('Authorization'));
      failures.accepted(req);
      stateOf(res).caller = caller;
      applyRateLimit(res, rateLimit);
      next();
    } catch (error) {
      await noteAuthentication(req, res, failures, error);
      next(error);
    }
  };
}

/** Inference routes: a Bearer credential must be there; billing checks it with the admission. */
export function credentialRequired(failures: AuthFailureLimiter): RequestHandler {
  return async (req, res, next) => {
    if (BEARER.test(req.get('Authorization') ?? '')) {
      next();
      return;
    }
    const refusal = new GatewayError(
      'invalid_api_key',
      'Missing or malformed Authorization header: send Authorization: Bearer <API key>',
    );
    // Refused by edge: billing is not asked about this request (not even on its way out).
    stateOf(res).authFailed = true;
    await failures.countFailure(req, refusal);
    next(refusal);
  };
}

/**
 * The caller of an inference request before its admission, without counting it (the admission
 * counts): an Idempotency-Key is claimed per account before anything is admitted.
 */
export function identifier(billing: BillingClient, failures: AuthFailureLimiter) {
  return async (req: Request, res: Response): Promise<Caller> => {
    const known = stateOf(res).caller;
    if (known) return known;
    try {
      const { caller } = await billing.authenticate(req.get('Authorization'), { count: false });
      failures.accepted(req);
      stateOf(res).caller = caller;
      return caller;
    } catch (error) {
      await noteAuthentication(req, res, failures, error);
      throw error;
    }
  };
}

/** Scoped-token management is for the API key's holder, not for a third party's token. */
export const requireApiKey: RequestHandler = (_req, res, next) => {
  if (callerOf(res).kind === 'api_key') {
    next();
    return;
  }
  next(
    new GatewayError('invalid_api_key', 'This operation requires an API key, not a scoped token'),
  );
};

/**
 * Failed authentication, limited per client address: guessing keys,
 * replaying dead tokens, hammering without credentials or guessing dashboard passwords costs a
 * client address at most `failuresPerMinute` refusals a minute.
 *
 * - The address is `req.ip`: the connection's peer, or the client a trusted proxy names in
 *   `X-Forwarded-For` (Express's `trust proxy`, set from TRUSTED_PROXIES; nobody by default).
 * - API keys, scoped tokens and the admin token (`guard`): billing (edge, for the admin token)
 *   decides and a refusal counts afterwards. Once an address used up its failures, any
 *   credential gets 429 without billing being asked — except one edge saw accepted in the last
 *   minutes (a bounded set of SHA-256 digests, `KnownCredentials`): a customer behind the same
 *   address (an ingress, a NAT) is never refused for someone else's guessing.
 * - Dashboard sign-in and invitation acceptance (`take`): a point is taken before billing is
 *   asked, atomically, and given back only when billing accepted; a wrong password, any refusal
 *   and a timeout keep it. So concurrent attempts cannot get past the limit either.
 *
 * State is per edge replica (in memory): the bound for N replicas is N × the setting, which is
 * enough to make guessing useless (billing limits each dashboard email across replicas).
 */

export interface AuthFailureLimiterOptions {
  failuresPerMinute: number;
  /** Accepted credentials remembered (digests); 20,000 by default, the least recent dropped. */
  knownCredentials?: number;
  /** How long an accepted credential is remembered after its last acceptance; 10 min. */
  knownForMs?: number;
  /** Client addresses whose failures are counted at once; 50,000 by default (`FailureWindows`). */
  addressesMax?: number;
  /** For tests: milliseconds since the epoch. */
  now?: () => number;
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

/**
 * Refusals counted against the client's address: edge's own (a missing credential, the admin
 * token, dashboard sign-in) as well as billing's. Not `REFUSED_CREDENTIAL_CODES`: a suspended
 * account's 403 ends the request's billing calls but is not counted here.
 */
const COUNTED_FAILURE_CODES = new Set([
  'invalid_api_key',
  'token_expired',
  'token_revoked',
  'unauthorized',
  // Dashboard sign-in and invitation acceptance.
  'invalid_credentials',
  'invalid_invitation',
]);

/**
 * Credentials accepted lately, kept as SHA-256 digests only: at most `max`, each for `ttlMs`
 * after its last acceptance (a Map in insertion order: the first entry is the least recent).
 */
export class KnownCredentials {
  readonly #expiries = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#expiries.size;
  }

  add(credential: string): void {
    const digest = digestOf(credential);
    this.#expiries.delete(digest);
    this.#expiries.set(digest, this.now() + this.ttlMs);
    if (this.#expiries.size > this.max) {
      const oldest = this.#expiries.keys().next().value;
      if (oldest !== undefined) this.#expiries.delete(oldest);
    }
  }

  has(credential: string): boolean {
    const digest = digestOf(credential);
    const expiry = this.#expiries.get(digest);
    if (expiry === undefined) return false;
    if (expiry > this.now()) return true;
    this.#expiries.delete(digest);
    return false;
  }

  forget(credential: string): void {
    this.#expiries.delete(digestOf(credential));
  }
}

/** What edge keeps of a credential in memory: its SHA-256, never the credential. */
export const digestOf = (credential: string) =>
  createHash('sha256').update(credential).digest('base64');

export class AuthFailureLimiter {
  readonly #limiter: FailureWindows;
  readonly #known: KnownCredentials;

  constructor(options: AuthFailureLimiterOptions) {
    this.#limiter = new FailureWindows({
      points: options.failuresPerMinute,
      windowS: WINDOW_S,
      addressesMax: options.addressesMax ?? DEFAULT_FAILURE_ADDRESSES_MAX,
      now: options.now,
    });
    this.#known = new KnownCredentials(
      options.knownCredentials ?? 20_000,
      options.knownForMs ?? 10 * 60_000,
      options.now,
    );
  }

  /**
   * Refuses an address that used up its failures (429 with Retry-After, billing not asked),
   * unless the request carries a credential accepted lately.
   */
  readonly guard: RequestHandler = async (req, res, next) => {
    const state = await this.#limiter.get(clientKey(req.ip));
    if (state !== null && state.remainingPoints <= 0) {
      const credential = credentialOf(req);
      if (credential !== undefined && this.#known.has(credential)) {
        next();
        return;
      }
      stateOf(res).addressLimited = true;
      next(tooMany(state));
      return;
    }
    next();
  };

  /** Whether the request's credential was accepted lately (within `knownForMs`). */
  knows(req: Request): boolean {
    const credential = credentialOf(req);
    return credential !== undefined && this.#known.has(credential);
  }

  /** Billing (or edge, for the admin token) accepted the request's credential. */
  accepted(req: Request): void {
    const credential = credentialOf(req);
    if (credential !== undefined) this.#known.add(credential);
  }

  /** Counts `error` against the request's address when it is an authentication failure. */
  async countFailure(req: Request, error: unknown): Promise<void> {
    if (!(error instanceof GatewayError)) return;
    const credential = credentialOf(req);
    // A credential refused now (deleted, regenerated, revoked, its account suspended) no longer
    // passes a tripped guard.
    if (credential !== undefined) this.#known.forget(credential);
    if (!COUNTED_FAILURE_CODES.has(error.code)) return;
    await this.#limiter.penalty(clientKey(req.ip));
  }

  /**
   * Dashboard sign-in and invitation acceptance: takes one of the address's points before
   * billing is asked (429 when none is left; atomic, so concurrent attempts cannot overdraw)
   * and returns the function that gives it back, to call only when billing accepted.
   */
  async take(req: Request): Promise<() => Promise<void>> {
    const key = clientKey(req.ip);
    try {
      await this.#limiter.consume(key);
    } catch (refusal) {
      if (refusal instanceof Error) throw refusal;
      throw tooMany(refusal as RateLimiterRes);
    }
    return async () => {
      await this.#limiter.reward(key);
    };
  }
}

function tooMany(state: RateLimiterRes): GatewayError {
  return new GatewayError(
    'rate_limit_exceeded',
    'Too many failed authentication attempts from this address; retry later',
    { details: { retryAfterS: Math.max(1, Math.ceil(state.msBeforeNext / 1000)) } },
  );
}
