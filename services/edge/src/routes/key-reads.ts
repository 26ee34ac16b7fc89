import type { Request, RequestHandler } from 'express';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { GatewayError } from '@gateway/contracts';
import { credentialOf, digestOf, type AuthFailureLimiter } from '../http/auth.js';

/**
 * Reads of `/v1/key` per credential and minute, per edge process. Not the account's limit (that
 * would spend requests on watching a budget), but a bound all the same: each read costs billing
 * an authentication and a few queries.
 */
export const KEY_READS_PER_MINUTE = 60;

export interface KeyReads {
  /** Before billing: 429 once a credential read its key more than KEY_READS_PER_MINUTE times. */
  readonly guard: RequestHandler;
  /** After billing accepted the request's credential: counts a read the guard let through. */
  readonly accepted: (req: Request) => Promise<void>;
  /** Whether the limiter keeps an entry for this credential (tests). */
  readonly tracked: (credential: string) => Promise<boolean>;
}

/**
 * Only credentials billing accepted get an entry (their digest, for a minute). A credential edge
 * has not seen accepted lately passes the guard uncounted and is counted once billing accepts
 * it; one billing refuses leaves nothing here and counts against its address instead
 * (`AuthFailureLimiter`). Before, every Authorization header, made up or not, kept an entry for a
 * minute, so a stream of invented credentials grew the process's memory without bound.
 */
export function keyReads(authFailures: AuthFailureLimiter): KeyReads {
  const limiter = new RateLimiterMemory({ points: KEY_READS_PER_MINUTE, duration: 60 });
  const counted = new WeakSet<Request>();
  const idOf = (req: Request) => digestOf(credentialOf(req) ?? '');
  const guard: RequestHandler = (req, _res, next) => {
    if (!authFailures.knows(req)) {
      next();
      return;
    }
    counted.add(req);
    limiter.consume(idOf(req), 1).then(
      () => next(),
      (refusal: { msBeforeNext?: number }) => {
        const retryAfterS = Math.max(1, Math.ceil((refusal.msBeforeNext ?? 1000) / 1000));
        next(
          new GatewayError(
            'rate_limit_exceeded',
            `At most ${KEY_READS_PER_MINUTE} reads of /v1/key per minute per credential; ` +
              `retry in ${retryAfterS} s`,
            { details: { retryAfterS } },
          ),
        );
      },
    );
  };
  const accepted = async (req: Request) => {
    // `penalty` counts without refusing: this read was already answered by billing.
    if (!counted.has(req)) await limiter.penalty(idOf(req), 1);
  };
  const tracked = async (credential: string) => (await limiter.get(digestOf(credential))) !== null;
  return { guard, accepted, tracked };
}
