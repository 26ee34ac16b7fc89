import {
  WebhookDeliveryPageSchema,
  WebhookDeliverySchema,
  WebhookExpirePreviousResultSchema,
  WebhookSigningSecretListSchema,
  WebhookSigningSecretSchema,
} from './dispatcher-api.js';
import type { Route } from './routes.js';

/*
 * The dispatcher's internal API (under `DISPATCHER_API_PREFIX`, edge's credential only), every
 * route declared once: the dispatcher serves them (`serveRoute`), edge's dispatcher client calls
 * them. Edge's operator API relays its webhook routes here path for path (`OPERATOR_ROUTES`,
 * `server: 'dispatcher'`), which is why the paths match those. None takes a body.
 */

export const DISPATCHER_ROUTES = {
  listSecrets: {
    method: 'GET',
    path: '/accounts/:accountId/webhook-secrets',
    answer: WebhookSigningSecretListSchema,
    summary:
      "The account's active signing secrets with their values, oldest first (makes the first)",
  },
  rotateSecret: {
    method: 'POST',
    path: '/accounts/:accountId/webhook-secrets/rotate',
    answer: WebhookSigningSecretSchema,
    status: 201,
    refusals: [429],
    summary:
      'A new current secret; the one it replaces signs beside it for the rotation window (limited ' +
      'per account and hour)',
  },
  expirePreviousSecret: {
    method: 'POST',
    path: '/accounts/:accountId/webhook-secrets/expire-previous',
    answer: WebhookExpirePreviousResultSchema,
    summary: "End the previous secret's rotation window now (idempotent: `expired` 0 again)",
  },
  listDeliveries: {
    method: 'GET',
    path: '/accounts/:accountId/webhook-deliveries',
    answer: WebhookDeliveryPageSchema,
    summary: "The account's deliveries with their attempts, newest first (?limit, ?cursor)",
  },
  redeliver: {
    method: 'POST',
    path: '/webhook-deliveries/:deliveryId/redeliver',
    answer: WebhookDeliverySchema,
    status: 202,
    refusals: [409],
    summary:
      'Deliver a finished delivery again (409 while it has attempts scheduled or once purged)',
  },
  redeliverOwn: {
    method: 'POST',
    path: '/accounts/:accountId/webhook-deliveries/:deliveryId/redeliver',
    answer: WebhookDeliverySchema,
    status: 202,
    refusals: [409],
    summary: "The same, for the dashboard's owners: another account's delivery is not found",
  },
} as const satisfies Record<string, Route>;
