import { ModelPutRequestSchema } from './catalog-api.js';
import {
  DashboardAccountDetailSchema,
  DashboardAccountListSchema,
  DashboardAccountPatchRequestSchema,
  DashboardAccountSchema,
  DashboardCreditRequestSchema,
  DashboardCreditResultSchema,
  DashboardWebhookDeliveryListSchema,
  InvitationCreateRequestSchema,
  InvitationCreatedSchema,
} from './dashboard-api.js';
import {
  DashboardCatalogModelListSchema,
  DashboardLedgerEntryPageSchema,
} from './dashboard-console-api.js';
import {
  AccountCreateRequestSchema,
  CatalogModelSchema,
  LedgerCheckSchema,
  OpenHoldListSchema,
  StatementSchema,
} from './operator-api.js';
import {
  ClosedPeriodListSchema,
  ClosedPeriodSchema,
  PeriodReportSchema,
} from './period-report-api.js';
import type { Route } from './routes.js';
import { UsageListSchema, UsageLogPageSchema } from './usage-api.js';

/*
 * The dashboard API's operators' console and finance's books (`/dashboard/api/operator/...`,
 * `/dashboard/api/finance/...`; dashboard-api.ts) declared as contracts: edge serves them
 * (`serveRoute`), passing them to the operator API, and the dashboard app calls them
 * (`callRoute`). Both operator roles read; only role `operator` writes (`operatorsOnly`), and
 * only `finance` closes a period. A route that also answers CSV (`?format=csv` or
 * `Accept: text/csv`) names its JSON answer; its CSV is a download link's.
 */

/** Accounts, the catalog, the ledger and usage across accounts (after `operatorsOnly`). */
export const DASHBOARD_OPERATOR_ROUTES = {
  accounts: {
    method: 'GET',
    path: '/operator/accounts',
    answer: DashboardAccountListSchema,
    summary: 'Accounts by exact id or part of the name (?q, ?limit, ?cursor)',
  },
  createAccount: {
    method: 'POST',
    path: '/operator/accounts',
    body: AccountCreateRequestSchema,
    answer: DashboardAccountSchema,
    status: 201,
    summary: 'Create an account (its owner is invited next)',
  },
  account: {
    method: 'GET',
    path: '/operator/accounts/:id',
    answer: DashboardAccountDetailSchema,
    summary: 'An account with its balance',
  },
  patchAccount: {
    method: 'PATCH',
    path: '/operator/accounts/:id',
    body: DashboardAccountPatchRequestSchema,
    answer: DashboardAccountDetailSchema,
    summary: "Set an account's rate limit",
  },
  suspend: {
    method: 'POST',
    path: '/operator/accounts/:id/suspend',
    answer: DashboardAccountSchema,
    summary: 'Suspend an account: its keys answer 403 at once',
  },
  unsuspend: {
    method: 'POST',
    path: '/operator/accounts/:id/unsuspend',
    answer: DashboardAccountSchema,
    summary: "Lift an account's suspension",
  },
  credit: {
    method: 'POST',
    path: '/operator/accounts/:id/credits',
    body: DashboardCreditRequestSchema,
    answer: DashboardCreditResultSchema,
    summary: 'Credit an account (an Idempotency-Key header is required: one key, one credit)',
  },
  invite: {
    method: 'POST',
    path: '/operator/accounts/:id/invitations',
    body: InvitationCreateRequestSchema,
    answer: InvitationCreatedSchema,
    status: 201,
    summary: "Invite an account's owner: the invitation with its link",
  },
  statement: {
    method: 'GET',
    path: '/operator/accounts/:id/statement',
    answer: StatementSchema,
    summary: "An account's statement (?from, ?to); CSV with ?format=csv or Accept: text/csv",
  },
  openHolds: {
    method: 'GET',
    path: '/operator/accounts/:id/holds',
    answer: OpenHoldListSchema,
    summary: "An account's open holds (reserved, not settled yet), oldest first, at most 100",
  },
  webhookDeliveries: {
    method: 'GET',
    path: '/operator/accounts/:id/webhook-deliveries',
    answer: DashboardWebhookDeliveryListSchema,
    summary: "An account's webhook deliveries, newest first (?limit, ?cursor)",
  },
  models: {
    method: 'GET',
    path: '/operator/models',
    answer: DashboardCatalogModelListSchema,
    summary: 'The model catalog, each node with its last observed health',
  },
  putModel: {
    method: 'PUT',
    path: '/operator/models/*model',
    body: ModelPutRequestSchema,
    answer: CatalogModelSchema,
    summary: 'Create or replace a model (its id may contain /)',
  },
  ledgerEntries: {
    method: 'GET',
    path: '/operator/ledger/entries',
    answer: DashboardLedgerEntryPageSchema,
    summary: 'Ledger entries, oldest first (?account, ?from, ?to, ?limit, ?cursor)',
  },
  ledgerCheck: {
    method: 'GET',
    path: '/operator/ledger/check',
    answer: LedgerCheckSchema,
    summary: "The ledger's invariant report",
  },
  usage: {
    method: 'GET',
    path: '/operator/usage',
    answer: UsageListSchema,
    summary: "Every account's usage, or one's (?account, ?from, ?to, ?group_by)",
  },
  usageRequests: {
    method: 'GET',
    path: '/operator/usage/requests',
    answer: UsageLogPageSchema,
    summary:
      'The request log across accounts or of one (?account, ?from, ?to, ?limit, ?cursor); the ' +
      'whole range as CSV with ?format=csv or Accept: text/csv',
  },
} as const satisfies Record<string, Route>;

/** The month-end close (after `staffOnly`: operators and finance read, finance closes). */
export const DASHBOARD_FINANCE_ROUTES = {
  report: {
    method: 'GET',
    path: '/finance/report',
    answer: PeriodReportSchema,
    summary:
      "A period's report (?from, ?to, ?time_zone, ?limit, ?cursor); one of its tables as CSV " +
      'with ?format=csv (or Accept: text/csv) and ?section',
  },
  periods: {
    method: 'GET',
    path: '/finance/periods',
    answer: ClosedPeriodListSchema,
    summary: 'The closed periods',
  },
  closePeriod: {
    method: 'POST',
    path: '/finance/periods/:period/close',
    answer: ClosedPeriodSchema,
    status: 201,
    refusals: [409],
    summary: "Close an ended month (finance only; the session's user closes it)",
  },
} as const satisfies Record<string, Route>;
