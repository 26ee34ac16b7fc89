import express, { type Router } from 'express';
import {
  DashboardInvitationAcceptRequestSchema,
  DashboardSignInRequestSchema,
  createBodyValidator,
  type DashboardInvitationAcceptRequest,
  type DashboardSignInRequest,
} from '@gateway/contracts';
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
 * overview. Edge keeps the session token in the browser's cookie and passes it in bodies, never
 * in a URL (URLs end up in logs).
 */
export function dashboardRoutes(services: BillingServices, dashboard: Dashboard): Router {
  const router = express.Router();
  const { sessions, users } = dashboard;
  router.post('/sessions', async (req, res) => {
    const body = validateSignIn(req.body);
    res.status(201).json(await sessions.signIn(body.realm ?? 'owner', body.email, body.password));
  });
  router.post('/sessions/resolve', async (req, res) => {
    res.json(await sessions.resolve(presentedToken((req.body as { token?: unknown })?.token)));
  });
  router.post('/sessions/end', async (req, res) => {
    await sessions.end(presentedToken((req.body as { token?: unknown })?.token));
    res.status(204).end();
  });
  router.post('/invitations/accept', async (req, res) => {
    const body = validateAccept(req.body);
    res.status(201).json(await users.accept(body.token, body.password));
  });
  router.get('/accounts/:id/overview', async (req, res) => {
    const { identity, ledger } = services;
    const deps = { prisma: identity.prisma, ledger, accounts: identity.accounts };
    res.json(await accountOverview(deps, req.params.id, dashboard.clock));
  });
  router.get('/accounts/:id/scoped-tokens', async (req, res) => {
    res.json(await dashboard.scopedTokens.list(req.params.id, req.query));
  });
  router.post('/accounts/:id/scoped-tokens/:tokenId/revoke', async (req, res) => {
    res.json(await dashboard.scopedTokens.revoke(req.params.id, req.params.tokenId));
  });
  return router;
}

/** Operator API additions (`/internal/v1/admin`): owner invitations and operator users. */
export function dashboardAdminRoutes(dashboard: Dashboard): Router {
  const router = express.Router();
  router.post('/accounts/:id/invitations', async (req, res) => {
    const body = (req.body ?? {}) as { email?: unknown };
    const invitation = await dashboard.users.invite(req.params.id, body.email);
    res.status(201).json({
      id: invitation.id,
      account_id: invitation.accountId,
      email: invitation.email,
      token: invitation.token,
      expires_at: invitation.expiresAt.toISOString(),
    });
  });
  router.post('/operator-users', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const user = await dashboard.users.createOperator({
      email: body.email,
      role: body.role,
      password: requiredString(body, 'password'),
    });
    res.status(201).json(user);
  });
  return router;
}
