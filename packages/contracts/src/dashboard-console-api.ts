import type { NodeHealthView } from './billing-api.js';
import type { Page } from './dashboard-api.js';
import type { CatalogModel, CatalogNode, LedgerEntry } from './operator-api.js';

/*
 * The dashboard's operator console answers that are the operator API's shapes (operator-api.ts)
 * in the dashboard's list form (dashboard-api.ts): apart from both, so neither imports the
 * other's answers. Types only: the browser app reads this module too.
 */

export interface DashboardCatalogNode extends CatalogNode {
  /** `unknown` when no worker reported on the node lately. */
  health: NodeHealthView['health'];
  observed_at: string | null;
  last_error_kind: NodeHealthView['lastErrorKind'];
}
/** `GET /operator/models`: the operator API's catalog, each node with its last observed health. */
export type DashboardCatalogModel = Omit<CatalogModel, 'nodes'> & { nodes: DashboardCatalogNode[] };
export interface DashboardCatalogModelList {
  object: 'list';
  data: DashboardCatalogModel[];
}
/** `GET /operator/ledger/entries`: the operator API's entries as a dashboard page. */
export type DashboardLedgerEntryPage = Page<LedgerEntry>;
