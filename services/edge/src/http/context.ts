import type { Request, Response } from 'express';
import type { Logger } from '@gateway/observability';
import { GatewayError } from '@gateway/contracts';
import type { Principal, RateLimit } from '../clients/billing-types.js';

/** What edge learns about a request as it goes, kept on `res.locals`. */
export interface RequestState {
  principal?: Principal;
  /** Set once the request was counted against the account's rate limit. */
  rateLimit?: RateLimit;
}

export function stateOf(res: Response): RequestState {
  const locals = res.locals as { edge?: RequestState };
  locals.edge ??= {};
  return locals.edge;
}

/** The authenticated caller; the auth middleware runs before every `/v1` route but one. */
export function principalOf(res: Response): Principal {
  const principal = stateOf(res).principal;
  if (!principal) throw new GatewayError('internal_error', 'Internal error');
  return principal;
}

/** The request's logger (pino-http's child, whose lines carry the request id). */
export function logOf(req: Request): Logger {
  const log = (req as { log?: Logger }).log;
  if (!log) throw new Error('request logger missing: pino-http must run first');
  return log;
}
