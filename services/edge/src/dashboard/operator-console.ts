import express, { type Router } from 'express';
import {
  DashboardAccountPatchRequestSchema,
  ModelPutRequestSchema,
  createBodyValidator,
  pathSegment,
  publicNodeUrl,
  type CatalogModel,
  type DashboardAccountPatchRequest,
  type DashboardCatalogModel,
  type DashboardCatalogModelList,
  type DashboardLedgerEntryPage,
  type ModelPutRequest,
  type NodeHealthView,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { accountIdOf } from './operator-routes.js';
import { deliveryPage } from './owner-webhooks.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sendStatement } from './statements.js';

const validatePatch = createBodyValidator<DashboardAccountPatchRequest>(
  DashboardAccountPatchRequestSchema,
);
const validateModel = createBodyValidator<ModelPutRequest>(ModelPutRequestSchema);

/**
 * `/dashboard/api/operator/*`, part 2 (after `requireSession` and `operatorsOnly`): the catalog, the ledger, the
 * invariant check, statements, deliveries, suspension and rate limits, passed to the operator
 * API. Role `finance` reads only (`operatorsOnly`).
 */
export function operatorConsoleRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const body = jsonBody(deps.limits.jsonBodyBytes);
  const { operator } = deps.billing;
  router.get('/models', async (_req, res) => {
    const [{ models }, { nodes }] = await Promise.all([
      operator.listModels(),
      operator.nodeHealth(),
    ]);
    const list: DashboardCatalogModelList = {
      object: 'list',
      data: models.map((model) => withNodeHealth(model, nodes)),
    };
    res.json(list);
  });
  router.put('/models/*model', ...body, async (req, res) => {
    const input = validateModel(req.body);
    const segments = (req.params as { model: string[] }).model;
    // A decoded `/` inside one segment is refused here, never re-read as a separator.
    segments.forEach((segment) => pathSegment(segment));
    const model = await operator.putModel(segments.join('/'), input);
    deps.billing.invalidateCatalog();
    res.json(model);
  });
  router.get('/ledger/entries', async (req, res) => {
    const query = pickQuery(req.query, ['account', 'from', 'to', ...PAGE_PARAMS]);
    const page = await operator.ledgerEntries(new URLSearchParams(query));
    const list: DashboardLedgerEntryPage = {
      object: 'list',
      data: page.entries,
      next_cursor: page.next_cursor,
    };
    res.json(list);
  });
  router.get('/ledger/check', async (_req, res) => {
    res.json(await operator.ledgerCheck());
  });
  router.get('/accounts/:id/statement', async (req, res) => {
    await sendStatement(deps, req, res, accountIdOf(req));
  });
  router.get('/accounts/:id/webhook-deliveries', async (req, res) => {
    await operator.getAccount(accountIdOf(req)); // the dispatcher knows no accounts: 404 for a typo
    res.json(await deliveryPage(deps, accountIdOf(req), req.query));
  });
  for (const action of ['suspend', 'unsuspend'] as const) {
    router.post(`/accounts/:id/${action}`, async (req, res) => {
      res.json(await operator.setSuspended(accountIdOf(req), action));
    });
  }
  router.patch('/accounts/:id', ...body, async (req, res) => {
    const input = validatePatch(req.body);
    res.json(await operator.patchAccount(accountIdOf(req), input));
  });
  return router;
}

/** Each node of the model gains its last observed health (`unknown` when none). */
function withNodeHealth(
  model: CatalogModel,
  health: readonly NodeHealthView[],
): DashboardCatalogModel {
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
