import express, { type Router } from 'express';
import {
  BILLING_DASHBOARD_ROUTES as R,
  OPERATOR_ROUTES,
  type InvitationCreateRequest,
  type InvitationIssued,
  type OperatorUserCreateRequest,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { BillingServices } from '../http/internal-routes.js';
import { requiredString } from '../http/wire.js';
import type { Dashboard } from './index.js';
import { accountOverview } from './overview.js';

/**
 * Billing's dashboard API (`BILLING_DASHBOARD_ROUTES`, under `/internal/v1/dashboard`, edge
 * only): sign-in, sessions, invitation acceptance and the owner's overview and scoped tokens.
 * Edge keeps the session token in the browser's cookie and passes it in bodies, never in a URL
 * (URLs end up in logs).
 */
export function dashboardRoutes(services: BillingServices, dashboard: Dashboard): Router {
  const router = express.Router();
  const { sessions, users, scopedTokens } = dashboard;
  serveRoute(router, R.signIn, ({ body }) =>
    sessions.signIn(body.realm ?? 'owner', body.email, body.password),
  );
  serveRoute(router, R.resolveSession, ({ body }) => sessions.resolve(body.token));
  serveRoute(router, R.endSession, ({ body }) => sessions.end(body.token));
  serveRoute(router, R.acceptInvitation, ({ body }) => users.accept(body.token, body.password));
  serveRoute(router, R.overview, ({ params }) => {
    const { identity, ledger } = services;
    const deps = { prisma: identity.prisma, ledger, accounts: identity.accounts };
    return accountOverview(deps, params.id, dashboard.clock);
  });
  serveRoute(router, R.scopedTokens, ({ params, req }) => scopedTokens.list(params.id, req.query));
  serveRoute(router, R.revokeScopedToken, ({ params }) =>
    scopedTokens.revoke(params.id, params.tokenId),
  );
  return router;
}

/** A body's fields as the contract names them; their values are checked by the users' rules. */
type Fields<T> = { [K in keyof T]?: unknown };

/** Operator API additions (`/internal/v1/admin`): owner invitations and operator users. */
export function dashboardAdminRoutes(services: BillingServices, dashboard: Dashboard): Router {
  const router = express.Router();
  // An operator finds here the id a token's budget or rate limit is set by.
  serveRoute(router, OPERATOR_ROUTES.listScopedTokens, async ({ params, req }) => {
    // An unknown account is 404, not an empty list: a typo must not read as "no tokens".
    await services.identity.accounts.get(params.id);
    return dashboard.scopedTokens.list(params.id, req.query);
  });
  router.post('/accounts/:id/invitations', async (req, res) => {
    const body = (req.body ?? {}) as Fields<InvitationCreateRequest>;
    const invitation = await dashboard.users.invite(req.params.id, body.email);
    const created: InvitationIssued = {
      id: invitation.id,
      account_id: invitation.accountId,
      email: invitation.email,
      token: invitation.token,
      expires_at: invitation.expiresAt.toISOString(),
    };
    res.status(201).json(created);
  });
  router.post('/operator-users', async (req, res) => {
    const body = (req.body ?? {}) as Fields<OperatorUserCreateRequest>;
    const user = await dashboard.users.createOperator({
      email: body.email,
      role: body.role,
      password: requiredString(body, 'password'),
    });
    res.status(201).json(user);
  });
  return router;
}
