import express, { type Request, type RequestHandler, type Router } from 'express';
import {
  AccountCreateRequestSchema,
  DashboardCreditRequestSchema,
  GatewayError,
  InvitationCreateRequestSchema,
  createBodyValidator,
  dashboardInvitationUrl,
  pathSegment,
  type DashboardAccount,
  type DashboardAccountDetail,
  type DashboardAccountList,
  type DashboardCreditRequest,
  type DashboardCreditResult,
  type InvitationCreateRequest,
  type InvitationCreated,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { adminCall } from './billing-calls.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sessionOf } from './session-routes.js';
import type { DashboardSettings } from './settings.js';

const validateCredit = createBodyValidator<DashboardCreditRequest>(DashboardCreditRequestSchema);
const validateAccount = createBodyValidator<Record<string, unknown>>(AccountCreateRequestSchema);
const validateInvite = createBodyValidator<InvitationCreateRequest>(InvitationCreateRequestSchema);

/** Operator users of either role read; only role `operator` writes (finance reads only). */
export const operatorsOnly: RequestHandler = (req, res, next) => {
  const { role } = sessionOf(res).user;
  if (role === 'owner') throw new GatewayError('forbidden', 'Operators only');
  if (role === 'finance' && req.method !== 'GET' && req.method !== 'HEAD') {
    throw new GatewayError('forbidden', 'The finance role reads only');
  }
  next();
};

export const account = (req: Request) => `/accounts/${pathSegment(String(req.params.id))}`;

/** The invitation link: on `PUBLIC_BASE_URL`, else on the origin the request came to. */
export function withInvitationUrl(
  invitation: Omit<InvitationCreated, 'url'>,
  req: Request,
  publicBaseUrl: string | undefined,
): InvitationCreated {
  const base = publicBaseUrl ?? `${req.protocol}://${req.get('Host') ?? '127.0.0.1'}`;
  return { ...invitation, url: dashboardInvitationUrl(base, invitation.token) };
}

/** `/dashboard/api/operator/*` (after `requireSession` and `operatorsOnly`). */
export function operatorRoutes(deps: ConsoleDeps, settings: DashboardSettings): Router {
  const router = express.Router();
  const body = jsonBody(deps.limits.jsonBodyBytes);
  router.get('/accounts', async (req, res) => {
    const query = pickQuery(req.query, ['q', ...PAGE_PARAMS]);
    const page = await adminCall<{
      accounts: DashboardAccountList['data'];
      next_cursor: string | null;
    }>(deps, { method: 'GET', path: `/accounts?${query}` });
    const list: DashboardAccountList = {
      object: 'list',
      data: page.accounts,
      next_cursor: page.next_cursor,
    };
    res.json(list);
  });
  router.post('/accounts', ...body, async (req, res) => {
    const input = validateAccount(req.body);
    const created = await adminCall<DashboardAccount>(deps, {
      method: 'POST',
      path: '/accounts',
      body: input,
    });
    res.status(201).json(created);
  });
  router.get('/accounts/:id', async (req, res) => {
    res.json(await adminCall<DashboardAccountDetail>(deps, { method: 'GET', path: account(req) }));
  });
  router.post('/accounts/:id/credits', ...body, async (req, res) => {
    const input = validateCredit(req.body);
    const key = req.get('Idempotency-Key');
    if (!key || !/^[\x21-\x7e]{1,255}$/.test(key)) {
      throw new GatewayError(
        'invalid_request_body',
        'Credits need an Idempotency-Key header (1 to 255 printable characters)',
        { param: 'Idempotency-Key' },
      );
    }
    const result = await adminCall<DashboardCreditResult>(deps, {
      method: 'POST',
      path: `${account(req)}/credits`,
      headers: { 'Idempotency-Key': key },
      body: input,
    });
    res.json(result);
  });
  router.post('/accounts/:id/invitations', ...body, async (req, res) => {
    const input = validateInvite(req.body);
    const invitation = await adminCall<Omit<InvitationCreated, 'url'>>(deps, {
      method: 'POST',
      path: `${account(req)}/invitations`,
      body: input,
    });
    res.status(201).json(withInvitationUrl(invitation, req, settings.publicBaseUrl));
  });
  return router;
}
