import { BILLING_API_PREFIX } from './billing-api.js';
import {
  DashboardInvitationAcceptRequestSchema,
  DashboardOverviewSchema,
  DashboardScopedTokenListSchema,
  DashboardScopedTokenSchema,
  DashboardSessionSchema,
  DashboardSessionTokenRequestSchema,
  DashboardSignInRequestSchema,
  DashboardStartedSessionSchema,
} from './dashboard-api.js';
import type { Route } from './routes.js';

/*
 * Billing's dashboard API (edge's credential only), every route declared once: sign-in,
 * sessions, invitation acceptance and an owner's data, from which edge serves the browser's
 * `/dashboard/api` (dashboard-api.ts, dashboard-routes.ts). Billing serves them (`serveRoute`),
 * billing-client's dashboard client calls them. A session's token travels in a body, never in a
 * path: URLs end up in logs.
 */

/** Where billing serves them; paths below are relative to it. */
export const BILLING_DASHBOARD_PREFIX = `${BILLING_API_PREFIX}/dashboard`;

export const BILLING_DASHBOARD_ROUTES = {
  signIn: {
    method: 'POST',
    path: '/sessions',
    body: DashboardSignInRequestSchema,
    answer: DashboardStartedSessionSchema,
    status: 201,
    refusals: [429],
    summary:
      "Check the password and start a session: its raw token is answered this once, for edge's " +
      "cookie (401 `invalid_credentials`; 429 past the email's failures; 503 when hashing is full)",
  },
  resolveSession: {
    method: 'POST',
    path: '/sessions/resolve',
    body: DashboardSessionTokenRequestSchema,
    answer: DashboardSessionSchema,
    summary: "The cookie's session (401 `session_required` when unknown or ended)",
  },
  endSession: {
    method: 'POST',
    path: '/sessions/end',
    body: DashboardSessionTokenRequestSchema,
    status: 204,
    summary: 'End a session (idempotent)',
  },
  acceptInvitation: {
    method: 'POST',
    path: '/invitations/accept',
    body: DashboardInvitationAcceptRequestSchema,
    answer: DashboardStartedSessionSchema,
    status: 201,
    summary:
      "Set the owner's password from an invitation and start a session (400 " +
      '`invalid_invitation` when unknown, used or expired)',
  },
  overview: {
    method: 'GET',
    path: '/accounts/:id/overview',
    answer: DashboardOverviewSchema,
    summary: "The account's balance and its spend today and this month (UTC)",
  },
  scopedTokens: {
    method: 'GET',
    path: '/accounts/:id/scoped-tokens',
    answer: DashboardScopedTokenListSchema,
    summary:
      "The account's registered scoped tokens, newest first (?limit, ?cursor: the account's own " +
      'token id)',
  },
  revokeScopedToken: {
    method: 'POST',
    path: '/accounts/:id/scoped-tokens/:tokenId/revoke',
    answer: DashboardScopedTokenSchema,
    summary: "Revoke one of the account's scoped tokens by id (idempotent; another's: 404)",
  },
} as const satisfies Record<string, Route>;
