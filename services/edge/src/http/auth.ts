import type { Request, RequestHandler, Response } from 'express';
import type { BillingClient } from '@gateway/billing-client';
import { GatewayError, type Caller } from '@gateway/contracts';
import type { AuthFailureLimiter } from './auth-failures.js';
import { applyRateLimit, callerOf, stateOf } from './context.js';

/*
 * Who may call, in as few billing calls as possible. Routes that place no hold authenticate
 * first (one call, which also counts the request against the account's rate limit), before the
 * body is read. Inference routes authenticate with their admission (one call for everything
 * before the job): here they only check that a credential was sent. Every authentication
 * failure counts against the client's address (auth-failures.ts), whose guard runs first.
 */

const AUTH_FAILURE_CODES = new Set([
  'invalid_api_key',
  'token_expired',
  'token_revoked',
  'account_suspended',
]);

/** Whether billing refused the credential itself (not the request). */
export function isAuthFailure(error: unknown): boolean {
  return error instanceof GatewayError && AUTH_FAILURE_CODES.has(error.code);
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

const BEARER = /^Bearer[ \t]+\S+[ \t]*$/i;

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
