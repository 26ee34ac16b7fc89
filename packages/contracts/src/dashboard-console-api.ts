import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { CatalogModelSchema, CatalogNodeSchema, LedgerEntrySchema } from './operator-api.js';
import { NODE_HEALTH_ERROR_KINDS, NODE_HEALTH_STATES } from './schemas/catalog-names.js';
import { StringEnum } from './schemas/common.js';

/*
 * The dashboard's operator console answers that are the operator API's shapes (operator-api.ts)
 * in the dashboard's list form (dashboard-api.ts): apart from both, so neither imports the
 * other's answers. The browser app reads this module too: its values are plain schemas.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A catalog node with its last observed health (the operator API's `GET /nodes/health`). */
export const DashboardCatalogNodeSchema = Type.Object(
  {
    ...CatalogNodeSchema.properties,
    /** `unknown` when no worker reported on the node lately. */
    health: StringEnum(NODE_HEALTH_STATES),
    observed_at: Nullable(Type.String({ format: 'date-time' })),
    last_error_kind: Nullable(StringEnum(NODE_HEALTH_ERROR_KINDS)),
  },
  { $id: 'DashboardCatalogNode' },
);
export type DashboardCatalogNode = Static<typeof DashboardCatalogNodeSchema>;

/** A catalog model, each node with its last observed health. */
export const DashboardCatalogModelSchema = Type.Object(
  { ...CatalogModelSchema.properties, nodes: Type.Array(DashboardCatalogNodeSchema) },
  { $id: 'DashboardCatalogModel' },
);
export type DashboardCatalogModel = Static<typeof DashboardCatalogModelSchema>;

/** `GET /operator/models`: the operator API's catalog, each node with its last observed health. */
export const DashboardCatalogModelListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(DashboardCatalogModelSchema) },
  { $id: 'DashboardCatalogModelList' },
);
export type DashboardCatalogModelList = Static<typeof DashboardCatalogModelListSchema>;

/** `GET /operator/ledger/entries`: the operator API's entries as a dashboard page. */
export const DashboardLedgerEntryPageSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(LedgerEntrySchema),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'DashboardLedgerEntryPage' },
);
export type DashboardLedgerEntryPage = Static<typeof DashboardLedgerEntryPageSchema>;
