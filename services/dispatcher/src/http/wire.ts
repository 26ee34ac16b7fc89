import { GatewayError, type WebhookDelivery, type WebhookSigningSecret } from '@gateway/contracts';
import type { DeliveryView } from '../deliveries/delivery-queries.js';
import type { SigningSecret } from '../secrets/signing-secrets.js';

/** JSON of the internal API (contract: packages/contracts/src/dispatcher-api.ts). */

export const secretToJson = (secret: SigningSecret): WebhookSigningSecret => ({
  id: secret.id,
  secret: secret.secret,
  created_at: secret.createdAt.toISOString(),
  expires_at: secret.expiresAt?.toISOString() ?? null,
});

export const deliveryToJson = (delivery: DeliveryView): WebhookDelivery => ({
  id: delivery.id,
  job_id: delivery.jobId,
  event_type: delivery.eventType,
  status: delivery.status,
  format: delivery.format,
  created_at: delivery.createdAt.toISOString(),
  next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
  payload_purged: delivery.payloadPurged,
  attempts: delivery.attempts.map((attempt) => ({
    attempt: attempt.attempt,
    at: attempt.at.toISOString(),
    status_code: attempt.statusCode,
    latency_ms: attempt.latencyMs,
    outcome: attempt.outcome,
    error: attempt.error,
  })),
});

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_ID_LENGTH = 256;

const invalid = (param: string, message: string) =>
  new GatewayError('invalid_request_body', message, { param });

/** `?limit=`: 1..100, 20 when absent. */
export function pageSize(value: unknown): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  const text = typeof value === 'string' ? value : '';
  const size = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(size >= 1 && size <= MAX_PAGE_SIZE)) {
    throw invalid('limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return size;
}

/** The cursor is the last delivery id of the previous page, base64url-wrapped (opaque). */
export const encodeCursor = (deliveryId: string): string =>
  Buffer.from(deliveryId, 'utf8').toString('base64url');

export function decodeCursor(value: unknown): string | null {
  if (value === undefined) return null;
  const id = typeof value === 'string' ? Buffer.from(value, 'base64url').toString('utf8') : '';
  if (!/^whd_[0-9a-f-]{36}$/.test(id)) throw invalid('cursor', 'cursor is not valid');
  return id;
}

/** Account ids are the envelope's ids: 1..256 characters. */
export function accountIdParam(value: string): string {
  if (value.length === 0 || value.length > MAX_ID_LENGTH) {
    throw invalid('accountId', 'account id must be 1 to 256 characters');
  }
  return value;
}
