import { AlertSettingsPutRequestSchema, AlertSettingsViewSchema } from './alerts-api.js';
import {
  DashboardApiKeyCreateRequestSchema,
  DashboardApiKeyListSchema,
  DashboardInvitationAcceptRequestSchema,
  DashboardIssuedApiKeySchema,
  DashboardOverviewSchema,
  DashboardRevealedWebhookSecretListSchema,
  DashboardScopedTokenCreatedSchema,
  DashboardScopedTokenListSchema,
  DashboardScopedTokenSchema,
  DashboardSessionSchema,
  DashboardSignInRequestSchema,
  DashboardWebhookDeliveryListSchema,
  DashboardWebhookDeliverySchema,
  DashboardWebhookExpirePreviousSchema,
  DashboardWebhookRotationSchema,
  DashboardWebhookSecretListSchema,
  DashboardWebhookSettingsSchema,
} from './dashboard-api.js';
import { StatementSchema } from './operator-api.js';
import { ReceiptSchema } from './receipts-api.js';
import type { Route } from './routes.js';
import { ScopedTokenCreateRequestSchema } from './schemas/scoped-token.js';
import { UsageListSchema, UsageLogPageSchema } from './usage-api.js';

/*
 * The dashboard API's sessions and owners' routes (`/dashboard/api`, dashboard-api.ts) declared
 * as contracts: edge serves them (`serveRoute`), the dashboard app calls them (`callRoute`).
 * The shapes are dashboard-api.ts's, or the public and operator APIs' where the dashboard shows
 * what those answer (usage, receipts, statements, alerts). Owners' routes are the session's
 * account's, never one named in a path or a body. A route that also answers CSV (`?format=csv`
 * or `Accept: text/csv`) names its JSON answer; its CSV is a download link's.
 */

/** Sign-in, the session, sign-out and invitation acceptance (the two POSTs set the cookie). */
export const DASHBOARD_SESSION_ROUTES = {
  signIn: {
    method: 'POST',
    path: '/session',
    body: DashboardSignInRequestSchema,
    answer: DashboardSessionSchema,
    refusals: [429],
    summary: 'Sign in (`realm`: owner by default, or operator); sets the session cookie',
  },
  session: {
    method: 'GET',
    path: '/session',
    answer: DashboardSessionSchema,
    summary: 'The session: its user, role, account, CSRF token and expiry',
  },
  signOut: {
    method: 'DELETE',
    path: '/session',
    status: 204,
    summary: 'Sign out: the session ends and its cookie is cleared',
  },
  acceptInvitation: {
    method: 'POST',
    path: '/invitations/accept',
    body: DashboardInvitationAcceptRequestSchema,
    answer: DashboardSessionSchema,
    refusals: [429],
    summary: "Set a new owner's password from an invitation; sets the session cookie",
  },
} as const satisfies Record<string, Route>;

/** An owner's own account (after `ownerOnly`): its overview, keys, tokens, webhooks, usage. */
export const DASHBOARD_OWNER_ROUTES = {
  overview: {
    method: 'GET',
    path: '/overview',
    answer: DashboardOverviewSchema,
    summary: 'Balance, reserved, available, and spend today and this month (UTC)',
  },
  apiKeys: {
    method: 'GET',
    path: '/api-keys',
    answer: DashboardApiKeyListSchema,
    summary: "The account's API keys: names and dates, never a key",
  },
  createApiKey: {
    method: 'POST',
    path: '/api-keys',
    body: DashboardApiKeyCreateRequestSchema,
    answer: DashboardIssuedApiKeySchema,
    status: 201,
    refusals: [409],
    summary: 'Create an API key (the raw key answered once; a taken name is 409)',
  },
  regenerateApiKey: {
    method: 'POST',
    path: '/api-keys/:name/regenerate',
    answer: DashboardIssuedApiKeySchema,
    summary: 'Regenerate an API key: the old one fails at once',
  },
  deleteApiKey: {
    method: 'DELETE',
    path: '/api-keys/:name',
    status: 204,
    summary: 'Delete an API key',
  },
  scopedTokens: {
    method: 'GET',
    path: '/scoped-tokens',
    answer: DashboardScopedTokenListSchema,
    summary: "The account's registered scoped tokens, newest first (?limit, ?cursor)",
  },
  createScopedToken: {
    method: 'POST',
    path: '/scoped-tokens',
    body: ScopedTokenCreateRequestSchema,
    answer: DashboardScopedTokenCreatedSchema,
    status: 201,
    summary: "Issue a scoped token with `POST /v1/scoped-jwt`'s options (the token shown once)",
  },
  revokeScopedToken: {
    method: 'POST',
    path: '/scoped-tokens/:id/revoke',
    answer: DashboardScopedTokenSchema,
    summary: 'Revoke a scoped token (idempotent)',
  },
  webhookSecrets: {
    method: 'GET',
    path: '/webhooks/secrets',
    answer: DashboardWebhookSecretListSchema,
    summary: 'The active webhook signing secrets, without their values',
  },
  revealWebhookSecrets: {
    method: 'POST',
    path: '/webhooks/secrets/reveal',
    answer: DashboardRevealedWebhookSecretListSchema,
    summary: 'The active webhook signing secrets with their values',
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/webhooks/secrets/rotate',
    answer: DashboardWebhookRotationSchema,
    status: 201,
    refusals: [429],
    summary: 'Rotate the signing secret (the new one shown; limited per account: 429)',
  },
  expirePreviousWebhookSecret: {
    method: 'POST',
    path: '/webhooks/secrets/expire-previous',
    answer: DashboardWebhookExpirePreviousSchema,
    summary: "End the previous secret's rotation window now",
  },
  webhookSettings: {
    method: 'GET',
    path: '/webhooks/settings',
    answer: DashboardWebhookSettingsSchema,
    summary: 'The webhook payload format',
  },
  putWebhookSettings: {
    method: 'PUT',
    path: '/webhooks/settings',
    body: DashboardWebhookSettingsSchema,
    answer: DashboardWebhookSettingsSchema,
    summary: 'Set the webhook payload format',
  },
  webhookDeliveries: {
    method: 'GET',
    path: '/webhooks/deliveries',
    answer: DashboardWebhookDeliveryListSchema,
    summary: "The account's webhook deliveries, newest first (?limit, ?cursor)",
  },
  redeliverWebhook: {
    method: 'POST',
    path: '/webhooks/deliveries/:id/redeliver',
    answer: DashboardWebhookDeliverySchema,
    status: 202,
    refusals: [409],
    summary: 'Send a delivery again (409 while it is still retrying or once purged)',
  },
  usage: {
    method: 'GET',
    path: '/usage',
    answer: UsageListSchema,
    summary: "The account's usage, as `GET /v1/usage` (?from, ?to, ?group_by)",
  },
  usageRequests: {
    method: 'GET',
    path: '/usage/requests',
    answer: UsageLogPageSchema,
    summary:
      "The account's request log, newest first (?from, ?to, ?limit, ?cursor); the whole range " +
      'as CSV with ?format=csv or Accept: text/csv',
  },
  receipt: {
    method: 'GET',
    path: '/usage/requests/:requestId',
    answer: ReceiptSchema,
    summary: "A request's receipt, as `GET /v1/requests/{id}`",
  },
  alerts: {
    method: 'GET',
    path: '/alerts',
    answer: AlertSettingsViewSchema,
    summary: "The account's alert settings (404 until set)",
  },
  putAlerts: {
    method: 'PUT',
    path: '/alerts',
    body: AlertSettingsPutRequestSchema,
    answer: AlertSettingsViewSchema,
    summary: "Set the account's alerts",
  },
  removeAlerts: {
    method: 'DELETE',
    path: '/alerts',
    status: 204,
    summary: "Remove the account's alerts",
  },
  statement: {
    method: 'GET',
    path: '/statement',
    answer: StatementSchema,
    summary:
      "The account's statement (?from, ?to), as the operator API's; CSV with ?format=csv or " +
      'Accept: text/csv',
  },
} as const satisfies Record<string, Route>;
