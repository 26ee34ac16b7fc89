/**
 * The bearer credential and the API key's shape: read where a request is admitted (billing, and
 * edge for API keys, ADR 0070), so that both refuse the same headers with the same words.
 */
import { GatewayError } from '@gateway/contracts';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The credential of an `Authorization: Bearer <credential>` header (401 otherwise). */
export function bearerCredential(authorization: string | null | undefined): string {
  if (authorization === undefined || authorization === null || authorization.trim() === '') {
    throw new GatewayError(
      'invalid_api_key',
      'Missing Authorization header: send Authorization: Bearer <API key>',
    );
  }
  const match = BEARER.exec(authorization.trim());
  if (!match) throw new GatewayError('invalid_api_key', 'Authorization scheme must be Bearer');
  return match[1] as string;
}

export const API_KEY_PREFIX = 'sk_live_';
/** `sk_live_` and 32 random bytes in base64url without padding (43 characters). */
const API_KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{43}$/;
export const API_KEY_BODY_LENGTH = 43;

/** Whether a presented credential has the shape of an API key (checked before any lookup). */
export function looksLikeApiKey(credential: string): boolean {
  return API_KEY_PATTERN.test(credential);
}
