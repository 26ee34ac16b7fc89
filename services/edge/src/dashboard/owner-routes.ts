import express, { type RequestHandler, type Router } from 'express';
import {
  DashboardApiKeyCreateRequestSchema,
  GatewayError,
  createBodyValidator,
  type DashboardApiKeyCreateRequest,
  type DashboardApiKeyList,
  type DashboardIssuedApiKey,
  type DashboardOverview,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { sessionOf } from './session-routes.js';

const validateCreate = createBodyValidator<DashboardApiKeyCreateRequest>(
  DashboardApiKeyCreateRequestSchema,
);

/** Owner routes: the account is the session's, never one named in a path or a body. */
export const ownerOnly: RequestHandler = (_req, res, next) => {
  const session = sessionOf(res);
  if (session.user.role !== 'owner' || session.account === null) {
    throw new GatewayError('forbidden', 'Account owners only');
  }
  next();
};

/** The session's account (after `ownerOnly`, which makes sure there is one). */
export const ownerAccountId = (res: express.Response) => sessionOf(res).account?.id ?? '';

/** `/dashboard/api/overview` and `/dashboard/api/api-keys` (after `requireSession` and `ownerOnly`). */
export function ownerRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  router.get('/overview', async (_req, res) => {
    const overview: DashboardOverview = await deps.billing.dashboard.overview(ownerAccountId(res));
    res.json(overview);
  });
  router.get('/api-keys', async (_req, res) => {
    const answer = await operator.listApiKeys(ownerAccountId(res));
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
    const issued: DashboardIssuedApiKey = await operator.createApiKey(ownerAccountId(res), {
      name: body.name,
    });
    res.status(201).json(issued);
  });
  router.post('/api-keys/:name/regenerate', async (req, res) => {
    const name = req.params.name ?? '';
    const issued: DashboardIssuedApiKey = await operator.regenerateApiKey(
      ownerAccountId(res),
      name,
    );
    res.json(issued);
  });
  router.delete('/api-keys/:name', async (req, res) => {
    await operator.deleteApiKey(ownerAccountId(res), req.params.name ?? '');
    res.status(204).end();
  });
  return router;
}
