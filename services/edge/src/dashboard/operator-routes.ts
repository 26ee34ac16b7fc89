import express, { type Request, type RequestHandler, type Router } from 'express';
import {
  AccountCreateRequestSchema,
  DashboardCreditRequestSchema,
  GatewayError,
  InvitationCreateRequestSchema,
  createBodyValidator,
  dashboardInvitationUrl,
  type AccountCreateRequest,
  type DashboardAccount,
  type DashboardAccountDetail,
  type DashboardAccountList,
  type DashboardCreditRequest,
  type DashboardCreditResult,
  type InvitationCreateRequest,
  type InvitationCreated,
  type InvitationIssued,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sessionOf } from './session-routes.js';
import type { DashboardSettings } from './settings.js';

const validateCredit = createBodyValidator<DashboardCreditRequest>(DashboardCreditRequestSchema);
const validateAccount = createBodyValidator<AccountCreateRequest>(AccountCreateRequestSchema);
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

/** The account named in the path (`:id`). */
export const accountIdOf = (req: Request) => String(req.params.id);

/** The invitation link: on `PUBLIC_BASE_URL`, else on the origin the request came to. */
export function withInvitationUrl(
  invitation: InvitationIssued,
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
  const { operator } = deps.billing;
  router.get('/accounts', async (req, res) => {
    const query = new URLSearchParams(pickQuery(req.query, ['q', ...PAGE_PARAMS]));
    const page = await operator.listAccounts(query);
    const list: DashboardAccountList = {
      object: 'list',
      data: page.accounts,
      next_cursor: page.next_cursor,
    };
    res.json(list);
  });
  router.post('/accounts', ...body, async (req, res) => {
    const created: DashboardAccount = await operator.createAccount(validateAccount(req.body));
    res.status(201).json(created);
  });
  router.get('/accounts/:id', async (req, res) => {
    const detail: DashboardAccountDetail = await operator.getAccount(accountIdOf(req));
    res.json(detail);
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
    const result: DashboardCreditResult = await operator.credit(accountIdOf(req), input, key);
    res.json(result);
  });
  router.post('/accounts/:id/invitations', ...body, async (req, res) => {
    const invitation = await operator.invite(accountIdOf(req), validateInvite(req.body));
    res.status(201).json(withInvitationUrl(invitation, req, settings.publicBaseUrl));
  });
  return router;
}
