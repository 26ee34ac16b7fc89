import express, { type Router } from 'express';
import {
  DashboardAccountPatchRequestSchema,
  createBodyValidator,
  pathSegment,
  publicNodeUrl,
  type DashboardAccountPatchRequest,
  ModelPutRequestSchema,
  type NodeHealthView,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { adminCall } from './billing-calls.js';
import { account } from './operator-routes.js';
import { deliveryPage } from './owner-webhooks.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sendStatement } from './statements.js';

const validatePatch = createBodyValidator<DashboardAccountPatchRequest>(
  DashboardAccountPatchRequestSchema,
);
const validateModel = createBodyValidator<Record<string, unknown>>(ModelPutRequestSchema);

/**
 * `/dashboard/api/operator/*`, part 2 (after `requireSession` and `operatorsOnly`): the catalog, the ledger, the
 * invariant check, statements, deliveries, suspension and rate limits, passed to the operator
 * API. Role `finance` reads only (`operatorsOnly`).
 */
export function operatorConsoleRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const body = jsonBody(deps.limits.jsonBodyBytes);
  const get = (path: string) => adminCall(deps, { method: 'GET', path });
  router.get('/models', async (_req, res) => {
    const [{ models }, { nodes }] = (await Promise.all([get('/models'), get('/nodes/health')])) as [
      { models: CatalogModelJson[] },
      { nodes: NodeHealthView[] },
    ];
    res.json({ object: 'list', data: models.map((model) => withNodeHealth(model, nodes)) });
  });
  router.put('/models/*model', ...body, async (req, res) => {
    const input = validateModel(req.body);
    const id = (req.params as { model: string[] }).model.map(pathSegment).join('/');
    const model = await adminCall(deps, { method: 'PUT', path: `/models/${id}`, body: input });
    deps.billing.invalidateCatalog();
    res.json(model);
  });
  router.get('/ledger/entries', async (req, res) => {
    const query = pickQuery(req.query, ['account', 'from', 'to', ...PAGE_PARAMS]);
    const page = (await get(`/ledger/entries?${query}`)) as {
      entries: unknown[];
      next_cursor: string | null;
    };
    res.json({ object: 'list', data: page.entries, next_cursor: page.next_cursor });
  });
  router.get('/ledger/check', async (_req, res) => {
    res.json(await get('/ledger/check'));
  });
  router.get('/accounts/:id/statement', async (req, res) => {
    await sendStatement(deps, req, res, String(req.params.id));
  });
  router.get('/accounts/:id/webhook-deliveries', async (req, res) => {
    await get(account(req)); // the dispatcher knows no accounts: 404 for a typo
    res.json(await deliveryPage(deps, account(req), req.query));
  });
  for (const action of ['suspend', 'unsuspend'] as const) {
    router.post(`/accounts/:id/${action}`, async (req, res) => {
      res.json(await adminCall(deps, { method: 'POST', path: `${account(req)}/${action}` }));
    });
  }
  router.patch('/accounts/:id', ...body, async (req, res) => {
    const input = validatePatch(req.body);
    res.json(await adminCall(deps, { method: 'PATCH', path: account(req), body: input }));
  });
  return router;
}

interface CatalogModelJson {
  id: string;
  nodes?: { url: string; weight?: number }[];
}

/** Each node of the model gains its last observed health (issue 16; `unknown` when none). */
function withNodeHealth(model: CatalogModelJson, health: readonly NodeHealthView[]) {
  if (!model.nodes) return model;
  const nodes = model.nodes.map((node) => {
    const seen = health.find((h) => h.model === model.id && h.url === publicNodeUrl(node.url));
    return {
      ...node,
      health: seen?.health ?? 'unknown',
      observed_at: seen?.observedAt ?? null,
      last_error_kind: seen?.lastErrorKind ?? null,
    };
  });
  return { ...model, nodes };
}
