import type { TSchema } from '@sinclair/typebox';
import { ScopedTokenInspectionSchema } from './billing-api.js';
import { AlertSettingsPutRequestSchema, AlertSettingsViewSchema } from './alerts-api.js';
import { BudgetListSchema, BudgetPutRequestSchema, BudgetViewSchema } from './budgets-api.js';
import { ModelPutRequestSchema } from './catalog-api.js';
import {
  DashboardScopedTokenListSchema,
  InvitationCreateRequestSchema,
  InvitationCreatedSchema,
  InvitationIssuedSchema,
} from './dashboard-api.js';
import {
  KeyRateLimitListSchema,
  KeyRateLimitPutRequestSchema,
  KeyRateLimitViewSchema,
} from './key-limits-api.js';
import { ApiKeyModelsPutRequestSchema, ApiKeyModelsViewSchema } from './key-models-api.js';
import {
  AccountCreateRequestSchema,
  AccountPatchRequestSchema,
  ApiKeyCreateRequestSchema,
  ApiKeyListSchema,
  CatalogModelListSchema,
  CatalogModelSchema,
  CreditRequestSchema,
  CreditResultSchema,
  IssuedApiKeySchema,
  LedgerCheckSchema,
  LedgerEntryPageSchema,
  NodeHealthListSchema,
  OpenHoldListSchema,
  OperatorAccountDetailSchema,
  OperatorAccountListSchema,
  OperatorAccountSchema,
  OperatorUserCreateRequestSchema,
  OperatorUsageLogPageSchema,
  OperatorUserSchema,
  ScopedTokenRevokeRequestSchema,
  StatementSchema,
} from './operator-api.js';
import {
  ClosedPeriodListSchema,
  ClosedPeriodSchema,
  PeriodCloseRequestSchema,
  PeriodReportSchema,
} from './period-report-api.js';
import { ReceiptSchema } from './receipts-api.js';
import type { Route } from './routes.js';
import { UsageListSchema } from './usage-api.js';

/*
 * The operator API (`/admin/v1` on edge, decisions §4), every route declared once. Edge mounts
 * each behind the admin token and relays it to the service that serves it (billing under
 * `/internal/v1/admin`, the dispatcher under `/internal/v1`, the same path); billing registers
 * its handlers from it; billing-client, the dashboard and gatewayctl call through it; edge's
 * OpenAPI document is generated from it.
 */

export interface OperatorRoute extends Route {
  /** The internal service that serves it. */
  readonly server: 'billing' | 'dispatcher';
  /** A body field naming an endpoint the dispatcher will call: checked like a job's `webhook`. */
  readonly webhookUrlField?: string;
  /**
   * What edge answers under `/admin/v1` when it adds to the serving service's answer (`answer`):
   * an invitation's link on the public origin.
   */
  readonly publicAnswer?: TSchema;
}

/** Something an API key and a scoped token each may have one of: a budget, rate limits. */
interface Owned<View extends TSchema, Put extends TSchema> {
  name: string;
  view: View;
  put: Put;
  getSummary(owner: string): string;
  putSummary(owner: string): string;
}

const BUDGET = {
  name: 'budget',
  view: BudgetViewSchema,
  put: BudgetPutRequestSchema,
  getSummary: (owner: string) =>
    `The budget of ${owner}: spent, reserved and remaining in its window, and when it resets`,
  putSummary: (owner: string) =>
    `Set the budget of ${owner} (a change of limit, period or zone starts a new window at once)`,
};
const RATE_LIMITS = {
  name: 'rate limits',
  view: KeyRateLimitViewSchema,
  put: KeyRateLimitPutRequestSchema,
  getSummary: (owner: string) =>
    `The requests and tokens per minute of ${owner} (null: no limit of its own)`,
  putSummary: (owner: string) =>
    `Set the rate limits of ${owner}, beside the account's (an omitted one is removed)`,
};

/** Its three routes, for one owner (a key or a token). */
function perOwner<const Path extends string, View extends TSchema, Put extends TSchema>(
  path: Path,
  owner: string,
  owned: Owned<View, Put>,
) {
  return {
    get: {
      method: 'GET',
      path,
      server: 'billing',
      answer: owned.view,
      summary: owned.getSummary(owner),
    },
    put: {
      method: 'PUT',
      path,
      server: 'billing',
      body: owned.put,
      answer: owned.view,
      summary: owned.putSummary(owner),
    },
    remove: {
      method: 'DELETE',
      path,
      server: 'billing',
      status: 204,
      summary: `Remove the ${owned.name} of ${owner}`,
    },
  } as const satisfies Record<string, OperatorRoute>;
}

const KEY = 'an API key (it covers the scoped tokens it signs)';
const TOKEN = 'a scoped token';
const keyBudget = perOwner('/accounts/:id/api-keys/:name/budget', KEY, BUDGET);
const tokenBudget = perOwner('/accounts/:id/scoped-tokens/:tokenId/budget', TOKEN, BUDGET);
const keyRateLimit = perOwner('/accounts/:id/api-keys/:name/rate-limit', KEY, RATE_LIMITS);
const tokenRateLimit = perOwner(
  '/accounts/:id/scoped-tokens/:tokenId/rate-limit',
  TOKEN,
  RATE_LIMITS,
);

export const OPERATOR_ROUTES = {
  createAccount: {
    method: 'POST',
    path: '/accounts',
    server: 'billing',
    body: AccountCreateRequestSchema,
    answer: OperatorAccountSchema,
    status: 201,
    summary: 'Create an account',
  },
  listAccounts: {
    method: 'GET',
    path: '/accounts',
    server: 'billing',
    answer: OperatorAccountListSchema,
    summary: 'List accounts (?limit, ?cursor)',
  },
  getAccount: {
    method: 'GET',
    path: '/accounts/:id',
    server: 'billing',
    answer: OperatorAccountDetailSchema,
    summary: 'An account with its balance',
  },
  patchAccount: {
    method: 'PATCH',
    path: '/accounts/:id',
    server: 'billing',
    body: AccountPatchRequestSchema,
    answer: OperatorAccountDetailSchema,
    summary: 'Change rate limit or webhook format',
  },
  suspendAccount: {
    method: 'POST',
    path: '/accounts/:id/suspend',
    server: 'billing',
    answer: OperatorAccountSchema,
    summary: 'Suspend an account',
  },
  unsuspendAccount: {
    method: 'POST',
    path: '/accounts/:id/unsuspend',
    server: 'billing',
    answer: OperatorAccountSchema,
    summary: 'Lift a suspension',
  },
  listApiKeys: {
    method: 'GET',
    path: '/accounts/:id/api-keys',
    server: 'billing',
    answer: ApiKeyListSchema,
    summary: "List an account's API keys (names only)",
  },
  createApiKey: {
    method: 'POST',
    path: '/accounts/:id/api-keys',
    server: 'billing',
    body: ApiKeyCreateRequestSchema,
    answer: IssuedApiKeySchema,
    status: 201,
    summary: 'Create an API key (shown once)',
  },
  regenerateApiKey: {
    method: 'POST',
    path: '/accounts/:id/api-keys/:name/regenerate',
    server: 'billing',
    answer: IssuedApiKeySchema,
    summary: 'Regenerate an API key; the old one stops at once',
  },
  deleteApiKey: {
    method: 'DELETE',
    path: '/accounts/:id/api-keys/:name',
    server: 'billing',
    status: 204,
    summary: 'Delete an API key',
  },
  credit: {
    method: 'POST',
    path: '/accounts/:id/credits',
    server: 'billing',
    body: CreditRequestSchema,
    answer: CreditResultSchema,
    refusals: [409],
    summary: 'Credit DZD (Idempotency-Key)',
  },
  statement: {
    method: 'GET',
    path: '/accounts/:id/statement',
    server: 'billing',
    answer: StatementSchema,
    summary: 'Statement (?from, ?to; Accept: text/csv for CSV)',
  },
  listWebhookSecrets: {
    method: 'GET',
    path: '/accounts/:id/webhook-secrets',
    server: 'dispatcher',
    summary: 'Active webhook signing secrets',
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/accounts/:id/webhook-secrets/rotate',
    server: 'dispatcher',
    status: 201,
    refusals: [429],
    summary:
      'Rotate the webhook signing secret: the current one signs beside the new one for the ' +
      'rotation window, an older previous one stops (limited per account and hour)',
  },
  expirePreviousWebhookSecret: {
    method: 'POST',
    path: '/accounts/:id/webhook-secrets/expire-previous',
    server: 'dispatcher',
    summary:
      "End the previous webhook signing secret's rotation window now: only the current secret signs",
  },
  listWebhookDeliveries: {
    method: 'GET',
    path: '/accounts/:id/webhook-deliveries',
    server: 'dispatcher',
    summary: 'Webhook deliveries of an account (?limit, ?cursor)',
  },
  redeliverWebhook: {
    method: 'POST',
    path: '/webhook-deliveries/:id/redeliver',
    server: 'dispatcher',
    summary: 'Deliver a webhook again',
  },
  listScopedTokens: {
    method: 'GET',
    path: '/accounts/:id/scoped-tokens',
    server: 'billing',
    answer: DashboardScopedTokenListSchema,
    summary:
      "An account's registered scoped tokens, newest first, with their ids (?limit, ?cursor): " +
      "the id a token's budget or rate limit is set by",
  },
  revokeScopedToken: {
    method: 'POST',
    path: '/scoped-tokens/revoke',
    server: 'billing',
    body: ScopedTokenRevokeRequestSchema,
    answer: ScopedTokenInspectionSchema,
    summary: 'Revoke any scoped token',
  },
  listModels: {
    method: 'GET',
    path: '/models',
    server: 'billing',
    answer: CatalogModelListSchema,
    summary: 'The model catalog',
  },
  nodeHealth: {
    method: 'GET',
    path: '/nodes/health',
    server: 'billing',
    answer: NodeHealthListSchema,
    summary: "Each catalog node's last observed health (healthy, down, unknown)",
  },
  putModel: {
    method: 'PUT',
    path: '/models/*model',
    server: 'billing',
    body: ModelPutRequestSchema,
    answer: CatalogModelSchema,
    summary: 'Create or replace a model (id may contain /)',
  },
  ledgerEntries: {
    method: 'GET',
    path: '/ledger/entries',
    server: 'billing',
    answer: LedgerEntryPageSchema,
    summary: 'Ledger entries (?account, ?from, ?to, ?cursor), paged',
  },
  ledgerReport: {
    method: 'GET',
    path: '/ledger/report',
    server: 'billing',
    answer: PeriodReportSchema,
    summary:
      "Finance's period report: trial balance, customers' liability roll-forward, revenue by " +
      'day, model and tier, holds open at the end (?from, ?to: inclusive dates; ?time_zone; ' +
      '?limit, ?cursor for accounts; CSV: Accept: text/csv or ?format=csv, ' +
      '?section=roll_forward|trial_balance|revenue)',
  },
  closedPeriods: {
    method: 'GET',
    path: '/ledger/periods',
    server: 'billing',
    answer: ClosedPeriodListSchema,
    summary: 'Closed periods of the books, oldest first',
  },
  closedPeriod: {
    method: 'GET',
    path: '/ledger/periods/:period',
    server: 'billing',
    answer: ClosedPeriodSchema,
    summary: 'One closed period (YYYY-MM): its report at the close and its entries digest',
  },
  closePeriod: {
    method: 'POST',
    path: '/ledger/periods/:period/close',
    server: 'billing',
    body: PeriodCloseRequestSchema,
    answer: ClosedPeriodSchema,
    status: 201,
    refusals: [409],
    summary:
      'Close a month (YYYY-MM) once it has ended: its report and entries digest are kept, and ' +
      'the ledger check recomputes them (409 before the end or once closed)',
  },
  ledgerCheck: {
    method: 'GET',
    path: '/ledger/check',
    server: 'billing',
    answer: LedgerCheckSchema,
    summary: 'Ledger invariant report',
  },
  invite: {
    method: 'POST',
    path: '/accounts/:id/invitations',
    server: 'billing',
    body: InvitationCreateRequestSchema,
    answer: InvitationIssuedSchema,
    publicAnswer: InvitationCreatedSchema,
    status: 201,
    summary: "Invite the account's owner to the dashboard (one-time link, shown once)",
  },
  createOperatorUser: {
    method: 'POST',
    path: '/operator-users',
    server: 'billing',
    body: OperatorUserCreateRequestSchema,
    answer: OperatorUserSchema,
    status: 201,
    refusals: [409],
    summary: 'Create a dashboard user of the platform team (role operator or finance)',
  },
  usage: {
    method: 'GET',
    path: '/usage',
    server: 'billing',
    answer: UsageListSchema,
    summary: 'Usage of all accounts (?from, ?to, ?group_by=day|model|key|day,model, ?account)',
  },
  usageRequests: {
    method: 'GET',
    path: '/usage/requests',
    server: 'billing',
    answer: OperatorUsageLogPageSchema,
    summary:
      'Request log, newest first (?from, ?to, ?account, ?limit, ?cursor; CSV: ?format=csv or ' +
      'Accept: text/csv)',
  },
  openHolds: {
    method: 'GET',
    path: '/accounts/:id/holds',
    server: 'billing',
    answer: OpenHoldListSchema,
    summary: "An account's open holds (reserved, not settled yet), oldest first, at most 100",
  },
  receipt: {
    method: 'GET',
    path: '/accounts/:id/requests/:requestId',
    server: 'billing',
    answer: ReceiptSchema,
    summary:
      "A request's receipt: tokens, prices, hold, settlement, refund, ledger ids (by " +
      'X-Request-Id or job id)',
  },
  getKeyBudget: keyBudget.get,
  putKeyBudget: keyBudget.put,
  removeKeyBudget: keyBudget.remove,
  getTokenBudget: tokenBudget.get,
  putTokenBudget: tokenBudget.put,
  removeTokenBudget: tokenBudget.remove,
  getKeyRateLimit: keyRateLimit.get,
  putKeyRateLimit: keyRateLimit.put,
  removeKeyRateLimit: keyRateLimit.remove,
  getTokenRateLimit: tokenRateLimit.get,
  putTokenRateLimit: tokenRateLimit.put,
  removeTokenRateLimit: tokenRateLimit.remove,
  getKeyModels: {
    method: 'GET',
    path: '/accounts/:id/api-keys/:name/models',
    server: 'billing',
    answer: ApiKeyModelsViewSchema,
    summary: 'The models an API key may use, and the scoped tokens it signs (empty: any model)',
  },
  putKeyModels: {
    method: 'PUT',
    path: '/accounts/:id/api-keys/:name/models',
    server: 'billing',
    body: ApiKeyModelsPutRequestSchema,
    answer: ApiKeyModelsViewSchema,
    summary: 'Set the models an API key and the tokens it signs may use (empty list: any model)',
  },
  listKeyRateLimits: {
    method: 'GET',
    path: '/accounts/:id/rate-limits',
    server: 'billing',
    answer: KeyRateLimitListSchema,
    summary: "The rate limits of an account's keys and scoped tokens that have their own",
  },
  listBudgets: {
    method: 'GET',
    path: '/accounts/:id/budgets',
    server: 'billing',
    answer: BudgetListSchema,
    summary: "Every budget of an account, each with its current window's spend",
  },
  getAlerts: {
    method: 'GET',
    path: '/accounts/:id/alerts',
    server: 'billing',
    answer: AlertSettingsViewSchema,
    summary: "The account's alert settings (404 when it has none)",
  },
  putAlerts: {
    method: 'PUT',
    path: '/accounts/:id/alerts',
    server: 'billing',
    body: AlertSettingsPutRequestSchema,
    answer: AlertSettingsViewSchema,
    webhookUrlField: 'url',
    summary:
      "Set the account's alerts: endpoint, balance threshold, budget shares, projected exhaustion",
  },
  removeAlerts: {
    method: 'DELETE',
    path: '/accounts/:id/alerts',
    server: 'billing',
    status: 204,
    summary: "Remove the account's alert settings (no more alerts)",
  },
} as const satisfies Record<string, OperatorRoute>;

export type OperatorRouteName = keyof typeof OPERATOR_ROUTES;
