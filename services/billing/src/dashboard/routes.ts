import express, { type Router } from 'express';
import {
  DashboardInvitationAcceptRequestSchema,
  DashboardSignInRequestSchema,
  OPERATOR_ROUTES,
  createBodyValidator,
  type DashboardInvitationAcceptRequest,
  type DashboardOverview,
  type DashboardScopedToken,
  type DashboardScopedTokenList,
  type DashboardSession,
  type DashboardSignInRequest,
  type DashboardStartedSession,
  type InvitationCreateRequest,
  type InvitationIssued,
  type OperatorUserCreateRequest,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { BillingServices } from '../http/internal-routes.js';
import { requiredString } from '../http/wire.js';
import type { Dashboard } from './index.js';
import { accountOverview } from './overview.js';
import { presentedToken } from './tokens.js';

const validateSignIn = createBodyValidator<DashboardSignInRequest>(DashboardSignInRequestSchema);
const validateAccept = createBodyValidator<DashboardInvitationAcceptRequest>(
  DashboardInvitationAcceptRequestSchema,
);

/**
 * `/internal/v1/dashboard` (edge only): sign-in, sessions, invitation acceptance and the owner's
 * overview; answers of packages/contracts/src/dashboard-api.ts. Edge keeps the session token in the browser's cookie and passes it in bodies, never
 * in a URL (URLs end up in logs).
 */
export function dashboardRoutes(services: BillingServices, dashboard: Dashboard): Router {
  const router = express.Router();
  const { sessions, users } = dashboard;
  router.post('/sessions', async (req, res) => {
    const body = validateSignIn(req.body);
    const started: DashboardStartedSession = await sessions.signIn(
      body.realm ?? 'owner',
      body.email,
      body.password,
    );
    res.status(201).json(started);
  });
  router.post('/sessions/resolve', async (req, res) => {
    const token = presentedToken((req.body as { token?: unknown })?.token);
    const session: DashboardSession = await sessions.resolve(token);
    res.json(session);
  });
  router.post('/sessions/end', async (req, res) => {
    await sessions.end(presentedToken((req.body as { token?: unknown })?.token));
    res.status(204).end();
  });
  router.post('/invitations/accept', async (req, res) => {
    const body = validateAccept(req.body);
    const started: DashboardStartedSession = await users.accept(body.token, body.password);
    res.status(201).json(started);
  });
  router.get('/accounts/:id/overview', async (req, res) => {
    const { identity, ledger } = services;
    const deps = { prisma: identity.prisma, ledger, accounts: identity.accounts };
    const overview: DashboardOverview = await accountOverview(deps, req.params.id, dashboard.clock);
    res.json(overview);
  });
  router.get('/accounts/:id/scoped-tokens', async (req, res) => {
    const list: DashboardScopedTokenList = await dashboard.scopedTokens.list(
      req.params.id,
      req.query,
    );
    res.json(list);
  });
  router.post('/accounts/:id/scoped-tokens/:tokenId/revoke', async (req, res) => {
    const token: DashboardScopedToken = await dashboard.scopedTokens.revoke(
      req.params.id,
      req.params.tokenId,
    );
    res.json(token);
  });
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
