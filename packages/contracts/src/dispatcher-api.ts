import { pathSegment } from './identifiers.js';
import type { DashboardRevealedWebhookSecret } from './dashboard-api.js';

/*
 * The webhook dispatcher's internal API, defined once: the dispatcher serves it
 * (`services/dispatcher/src/http`), only edge calls it (its operator API passes it through, its
 * dashboard reads it). Keys are snake_case, times ISO 8601 UTC. Refusals are the gateway's one
 * error body; a rotation over the per-account limit is 429 with `Retry-After`. The dispatcher
 * knows no accounts: edge asks billing first whether one exists.
 */

export const DISPATCHER_API_PREFIX = '/internal/v1';

/** Every path of the API, relative to `DISPATCHER_API_PREFIX`, ids encoded. */
export const DISPATCHER_PATHS = {
  secrets: (accountId: string) => `/accounts/${pathSegment(accountId)}/webhook-secrets`,
  rotate: (accountId: string) => `/accounts/${pathSegment(accountId)}/webhook-secrets/rotate`,
  expirePrevious: (accountId: string) =>
    `/accounts/${pathSegment(accountId)}/webhook-secrets/expire-previous`,
  deliveries: (accountId: string) => `/accounts/${pathSegment(accountId)}/webhook-deliveries`,
  /** With an account: the dashboard's owner route (another account's delivery is not found). */
  redeliver: (deliveryId: string, accountId?: string) =>
    `${accountId === undefined ? '' : `/accounts/${pathSegment(accountId)}`}` +
    `/webhook-deliveries/${pathSegment(deliveryId)}/redeliver`,
} as const;

/** A signing secret with its value (the internal API always answers it; edge hides it). */
export type WebhookSigningSecret = DashboardRevealedWebhookSecret;

/** `GET /accounts/{id}/webhook-secrets`: the active secrets, oldest first (at most two). */
export interface WebhookSigningSecretList {
  secrets: WebhookSigningSecret[];
}

/** `POST /accounts/{id}/webhook-secrets/expire-previous`: how many stopped, what is left. */
export interface WebhookExpirePreviousResult {
  expired: number;
  secrets: WebhookSigningSecret[];
}

export const WEBHOOK_DELIVERY_STATUSES = [
  'queued',
  'retrying',
  'delivered',
  'failed',
  'dropped',
] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export interface WebhookDeliveryAttempt {
  attempt: number;
  at: string;
  /** The receiver's HTTP status; null when none came (timeout, connection refused). */
  status_code: number | null;
  latency_ms: number;
  outcome: string;
  error: string | null;
}

/** One delivery with its attempts (`POST .../redeliver` answers it: 202, `status` queued). */
export interface WebhookDelivery {
  id: string;
  /** The job's id; for an account alert, the alert's event id; for a response, its id. */
  job_id: string;
  /**
   * `inference.completed` for a job's result, the alert's type (`budget.threshold`, …), or
   * `response.<status>` for a background response's end.
   */
  event_type: string;
  status: WebhookDeliveryStatus;
  /** The payload format (decisions: A or B). */
  format: 'A' | 'B';
  created_at: string;
  next_attempt_at: string | null;
  payload_purged: boolean;
  attempts: WebhookDeliveryAttempt[];
}

/** `GET /accounts/{id}/webhook-deliveries?limit=&cursor=`: newest first, `limit` 1–100 (20). */
export interface WebhookDeliveryPage {
  deliveries: WebhookDelivery[];
  next_cursor: string | null;
}
