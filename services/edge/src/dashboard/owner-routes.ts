import express, { type RequestHandler, type Router } from 'express';
import {
  DashboardApiKeyCreateRequestSchema,
  GatewayError,
  createBodyValidator,
  pathSegment,
  type DashboardApiKeyCreateRequest,
  type DashboardApiKeyList,
  type DashboardIssuedApiKey,
  type DashboardOverview,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { adminCall } from './billing-calls.js';
import { sessionOf } from './session-routes.js';

const validateCreate = createBodyValidator<DashboardApiKeyCreateRequest>(
  DashboardApiKeyCreateRequestSchema,
);

type KeyRow = { name: string; created_at: string; last_used_at: string | null };

/** Owner routes: the account is the session's, never one named in a path or a body. */
export const ownerOnly: RequestHandler = (_req, res, next) => {
  const session = sessionOf(res);
  if (session.user.role !== 'owner' || session.account === null) {
    throw new GatewayError('forbidden', 'Account owners only');
  }
  next();
};

export const accountPath = (res: express.Response) =>
  `/accounts/${pathSegment(sessionOf(res).account?.id ?? '')}`;

/** `/dashboard/api/overview` and `/dashboard/api/api-keys` (after `requireSession` and `ownerOnly`). */
export function ownerRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  router.get('/overview', async (_req, res) => {
    res.json(
      await deps.billing.dashboard<DashboardOverview>('GET', `${accountPath(res)}/overview`),
    );
  });
  router.get('/api-keys', async (_req, res) => {
    const answer = await adminCall<{ api_keys: KeyRow[] }>(deps, {
      method: 'GET',
      path: `${accountPath(res)}/api-keys`,
    });
    const list: DashboardApiKeyList = {
      object: 'list',
      data: answer.api_keys.map(({ name, created_at, last_used_at }) => ({
        name,
        created_at,
        last_used_at,
      })),
    };
    res.json(list);
  });
  router.post('/api-keys', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    const body = validateCreate(req.body);
    const issued = await adminCall<DashboardIssuedApiKey>(deps, {
      method: 'POST',
      path: `${accountPath(res)}/api-keys`,
      body: { name: body.name },
    });
    res.status(201).json(issued);
  });
  router.post('/api-keys/:name/regenerate', async (req, res) => {
    const issued = await adminCall<DashboardIssuedApiKey>(deps, {
      method: 'POST',
      path: `${accountPath(res)}/api-keys/${pathSegment(req.params.name ?? '')}/regenerate`,
    });
    res.json(issued);
  });
  router.delete('/api-keys/:name', async (req, res) => {
    await adminCall(deps, {
      method: 'DELETE',
      path: `${accountPath(res)}/api-keys/${pathSegment(req.params.name ?? '')}`,
    });
    res.status(204).end();
  });
  return router;
}
