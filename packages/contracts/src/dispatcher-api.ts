import { Type, type Static } from '@sinclair/typebox';
import { DashboardWebhookSecretSchema } from './dashboard-api.js';
import { StringEnum } from './schemas/common.js';

/*
 * The webhook dispatcher's internal API, defined once: the dispatcher serves it
 * (`services/dispatcher/src/http`), only edge calls it (its operator API passes it through, its
 * dashboard reads it); its routes are `DISPATCHER_ROUTES` (dispatcher-routes.ts). Keys are
 * snake_case, times ISO 8601 UTC. Refusals are the gateway's one error body; a rotation over the
 * per-account limit is 429 with `Retry-After`. The dispatcher knows no accounts: edge asks
 * billing first whether one exists. No schema here has an `$id`: these answers are internal,
 * never in the OpenAPI document.
 */

export const DISPATCHER_API_PREFIX = '/internal/v1';

const IsoDate = Type.String({ format: 'date-time' });

/**
 * A signing secret with its value (the internal API always answers it; edge hides it): the
 * dashboard's listed secret (`DashboardWebhookSecret`) and `secret`.
 */
export const WebhookSigningSecretSchema = Type.Composite([
  DashboardWebhookSecretSchema,
  Type.Object({ secret: Type.String() }),
]);
export type WebhookSigningSecret = Static<typeof WebhookSigningSecretSchema>;

/** `GET /accounts/{id}/webhook-secrets`: the active secrets, oldest first (at most two). */
export const WebhookSigningSecretListSchema = Type.Object({
  secrets: Type.Array(WebhookSigningSecretSchema),
});
export type WebhookSigningSecretList = Static<typeof WebhookSigningSecretListSchema>;

/** `POST /accounts/{id}/webhook-secrets/expire-previous`: how many stopped, what is left. */
export const WebhookExpirePreviousResultSchema = Type.Object({
  expired: Type.Integer({ minimum: 0 }),
  secrets: Type.Array(WebhookSigningSecretSchema),
});
export type WebhookExpirePreviousResult = Static<typeof WebhookExpirePreviousResultSchema>;

export const WEBHOOK_DELIVERY_STATUSES = [
  'queued',
  'retrying',
  'delivered',
  'failed',
  'dropped',
] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookDeliveryAttemptSchema = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  at: IsoDate,
  /** The receiver's HTTP status; null when none came (timeout, connection refused). */
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Integer({ minimum: 0 }),
  outcome: Type.String(),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type WebhookDeliveryAttempt = Static<typeof WebhookDeliveryAttemptSchema>;

/** One delivery with its attempts (`POST .../redeliver` answers it: 202, `status` queued). */
export const WebhookDeliverySchema = Type.Object({
  id: Type.String(),
  /** The job's id; for an account alert, the alert's event id; for a response, its id. */
  job_id: Type.String(),
  /**
   * `inference.completed` for a job's result, the alert's type (`budget.threshold`, …), or
   * `response.<status>` for a background response's end.
   */
  event_type: Type.String(),
  status: StringEnum(WEBHOOK_DELIVERY_STATUSES),
  /** The payload format (decisions: A or B). */
  format: StringEnum(['A', 'B'] as const),
  created_at: IsoDate,
  next_attempt_at: Type.Union([IsoDate, Type.Null()]),
  payload_purged: Type.Boolean(),
  attempts: Type.Array(WebhookDeliveryAttemptSchema),
});
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

/** `GET /accounts/{id}/webhook-deliveries?limit=&cursor=`: newest first, `limit` 1–100 (20). */
export const WebhookDeliveryPageSchema = Type.Object({
  deliveries: Type.Array(WebhookDeliverySchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type WebhookDeliveryPage = Static<typeof WebhookDeliveryPageSchema>;
