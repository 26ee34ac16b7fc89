import express, { type Request, type Router } from 'express';
import {
  DASHBOARD_OPERATOR_ROUTES as R,
  pathSegment,
  publicNodeUrl,
  type CatalogModel,
  type DashboardCatalogModel,
  type DashboardCatalogModelList,
  type DashboardLedgerEntryPage,
  type NodeHealthView,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { accountIdOf } from './operator-routes.js';
import { deliveryPage } from './owner-webhooks.js';
import { PAGE_PARAMS, pickQuery } from './query.js';
import { sendStatement } from './statements.js';

/** The `*model` parameter's segments as Express decoded them, one by one. */
const modelSegments = (req: Request) => (req.params as { model: string[] }).model;

/**
 * The operators' console, part 2 (`DASHBOARD_OPERATOR_ROUTES`, after `requireSession` and
 * `operatorsOnly`): the catalog, the ledger, the invariant check, statements, deliveries,
 * suspension and rate limits, passed to the operator API. Role `finance` reads only
 * (`operatorsOnly`). The statement answers CSV when asked, which `serveRoute` does not do: its
 * handler is written out, mounted on its route's path; its JSON answer is the route's.
 */
export function operatorConsoleRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const json = jsonBody(deps.limits.jsonBodyBytes);
  const { operator } = deps.billing;
  serveRoute(router, R.models, async () => {
    const [{ models }, { nodes }] = await Promise.all([
      operator.listModels(),
      operator.nodeHealth(),
    ]);
    return {
      object: 'list',
      data: models.map((model) => withNodeHealth(model, nodes)),
    } satisfies DashboardCatalogModelList;
  });
  serveRoute(
    router,
    R.putModel,
    async ({ req, params, body }) => {
      // A decoded `/` inside one segment is refused here, never re-read as a separator.
      modelSegments(req).forEach((segment) => pathSegment(segment));
      const model = await operator.putModel(params.model, body);
      deps.billing.invalidateCatalog();
      return model;
    },
    json,
  );
  serveRoute(router, R.ledgerEntries, async ({ req }) => {
    const query = pickQuery(req.query, ['account', 'from', 'to', ...PAGE_PARAMS]);
    const page = await operator.ledgerEntries(new URLSearchParams(query));
    return {
      object: 'list',
      data: page.entries,
      next_cursor: page.next_cursor,
    } satisfies DashboardLedgerEntryPage;
  });
  serveRoute(router, R.ledgerCheck, () => operator.ledgerCheck());
  router.get(R.statement.path, async (req, res) => {
    await sendStatement(deps, req, res, accountIdOf(req));
  });
  serveRoute(router, R.openHolds, ({ params }) => operator.openHolds(params.id));
  serveRoute(router, R.webhookDeliveries, async ({ req, params }) => {
    await operator.getAccount(params.id); // the dispatcher knows no accounts: 404 for a typo
    return deliveryPage(deps, params.id, req.query);
  });
  serveRoute(router, R.suspend, ({ params }) => operator.setSuspended(params.id, 'suspend'));
  serveRoute(router, R.unsuspend, ({ params }) => operator.setSuspended(params.id, 'unsuspend'));
  serveRoute(
    router,
    R.patchAccount,
    ({ params, body }) => operator.patchAccount(params.id, body),
    json,
  );
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
