import express, { type Request, type RequestHandler, type Router } from 'express';
import {
  DASHBOARD_OPERATOR_ROUTES as R,
  GatewayError,
  dashboardInvitationUrl,
  type DashboardAccountList,
  type InvitationCreated,
  type InvitationIssued,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sessionOf } from './session-routes.js';
import type { DashboardSettings } from './settings.js';

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

/**
 * Accounts in the operators' console (`DASHBOARD_OPERATOR_ROUTES`, after `requireSession` and
 * `operatorsOnly`): search, creation, detail, credits and invitations, passed to the operator
 * API.
 */
export function operatorRoutes(deps: ConsoleDeps, settings: DashboardSettings): Router {
  const router = express.Router();
  const json = jsonBody(deps.limits.jsonBodyBytes);
  const { operator } = deps.billing;
  serveRoute(router, R.accounts, async ({ req }) => {
    const query = new URLSearchParams(pickQuery(req.query, ['q', ...PAGE_PARAMS]));
    const page = await operator.listAccounts(query);
    return {
      object: 'list',
      data: page.accounts,
      next_cursor: page.next_cursor,
    } satisfies DashboardAccountList;
  });
  serveRoute(router, R.createAccount, ({ body }) => operator.createAccount(body), json);
  serveRoute(router, R.account, ({ params }) => operator.getAccount(params.id));
  serveRoute(
    router,
    R.credit,
    ({ req, params, body }) => {
      const key = req.get('Idempotency-Key');
      if (!key || !/^[\x21-\x7e]{1,255}$/.test(key)) {
        throw new GatewayError(
          'invalid_request_body',
          'Credits need an Idempotency-Key header (1 to 255 printable characters)',
          { param: 'Idempotency-Key' },
        );
      }
      return operator.credit(params.id, body, key);
    },
    json,
  );
  serveRoute(
    router,
    R.invite,
    async ({ req, params, body }) =>
      withInvitationUrl(await operator.invite(params.id, body), req, settings.publicBaseUrl),
    json,
  );
  return router;
}
