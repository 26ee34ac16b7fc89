import { createHmac, randomBytes } from 'node:crypto';
import { GatewayError, DASHBOARD_LIMITS } from '@gateway/contracts';
import { randomBase32, sha256Hex } from '../identity/secrets.js';

/** Session and invitation tokens: 32 random bytes, base64url (43 characters). */
export const newSecretToken = (): string => randomBytes(32).toString('base64url');

/** Only this digest of a session or invitation token is stored. */
export const tokenDigest = (token: string): string => sha256Hex(token);

/**
 * The session's CSRF token, derived from the session token (HMAC-SHA256 keyed by it): nothing
 * more to store, unknowable without the httpOnly cookie, and it dies with the session.
 */
export const csrfTokenOf = (sessionToken: string): string =>
  createHmac('sha256', sessionToken).update('dashboard-csrf-v1').digest('base64url');

export const newUserId = (prefix: 'own' | 'opu' | 'inv' | 'ses'): string =>
  `${prefix}_${randomBase32(20)}`;

/** Emails compare lower-case and trimmed (one user per address). */
export function normalEmail(value: unknown, param = 'email'): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (
    email.length < 3 ||
    email.length > DASHBOARD_LIMITS.emailMaxLength ||
    !/^[^\s@]+@[^\s@]+$/.test(email)
  ) {
    throw new GatewayError('invalid_request_body', `${param} must be an email address`, { param });
  }
  return email;
}

export function newPassword(value: unknown): string {
  const { passwordMinLength: min, passwordMaxLength: max } = DASHBOARD_LIMITS;
  if (typeof value !== 'string' || [...value].length < min || value.length > max) {
    throw new GatewayError('invalid_request_body', `password must be ${min} to ${max} characters`, {
      param: 'password',
    });
  }
  return value;
}

export function presentedToken(value: unknown, param = 'token'): string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > DASHBOARD_LIMITS.tokenMaxLength
  ) {
    throw new GatewayError('invalid_request_body', `${param} is missing or malformed`, { param });
  }
  return value;
}
