import type { TSchema } from '@sinclair/typebox';
import {
  AlertSettingsPutRequestSchema,
  AlertSettingsViewSchema,
  AccountCreateRequestSchema,
  AccountPatchRequestSchema,
  ApiKeyCreateRequestSchema,
  ApiKeyListSchema,
  BudgetListSchema,
  BudgetPutRequestSchema,
  BudgetViewSchema,
  CreditRequestSchema,
  CreditResultSchema,
  InvitationCreatedSchema,
  KeyRateLimitListSchema,
  KeyRateLimitPutRequestSchema,
  ApiKeyModelsPutRequestSchema,
  ApiKeyModelsViewSchema,
  KeyRateLimitViewSchema,
  IssuedApiKeySchema,
  LedgerCheckSchema,
  LedgerEntryPageSchema,
  ModelPutRequestSchema,
  OperatorAccountDetailSchema,
  OperatorAccountListSchema,
  OperatorAccountSchema,
  OperatorUserCreateRequestSchema,
  InvitationCreateRequestSchema,
  ReceiptSchema,
  ScopedTokenRevokeRequestSchema,
  StatementSchema,
  UsageListSchema,
  ClosedPeriodListSchema,
  ClosedPeriodSchema,
  PeriodCloseRequestSchema,
  PeriodReportSchema,
} from '@gateway/contracts';

export type AdminMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One operator route: where it goes, what body it takes. The OpenAPI document reads this too. */
export interface AdminRoute {
  method: AdminMethod;
  /** Express path under `/admin/v1`; `*model` captures an id containing `/`. */
  path: string;
  /** Billing serves it under `/internal/v1/admin`, the dispatcher under `/internal/v1`. */
  target: 'billing' | 'dispatcher';
  summary: string;
  body?: TSchema;
  /** The answer's contract schema (operator-api.ts), for the OpenAPI document; else an object. */
  answer?: TSchema;
  /** Status of success when not 200. */
  status?: 201 | 204;
  /**
   * The dispatcher knows no accounts: edge first asks billing whether the account (`:id`)
   * exists, so a typo cannot create secrets for nobody.
   */
  accountMustExist?: boolean;
  /** The answer is an owner invitation: edge adds its link (`url`) on the public origin. */
  invitationLink?: boolean;
  /** May answer 429 `rate_limit_exceeded` with `Retry-After` (listed in the OpenAPI document). */
  rateLimited?: boolean;
  /** A body field naming an endpoint the dispatcher will call: checked like a job's `webhook`. */
  webhookUrlField?: string;
}

/** decisions §4, plus what billing offers beside it (listings, api-key listing, revocation). */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  {
    method: 'post',
    path: '/accounts',
    target: 'billing',
    answer: OperatorAccountSchema,
    summary: 'Create an account',
    body: AccountCreateRequestSchema,
    status: 201,
  },
  {
    method: 'get',
    path: '/accounts',
    target: 'billing',
    answer: OperatorAccountListSchema,
    summary: 'List accounts (?limit, ?cursor)',
  },
  {
    method: 'get',
    path: '/accounts/:id',
    target: 'billing',
    answer: OperatorAccountDetailSchema,
    summary: 'An account with its balance',
  },
  {
    method: 'patch',
    path: '/accounts/:id',
    target: 'billing',
    answer: OperatorAccountDetailSchema,
    summary: 'Change rate limit or webhook format',
    body: AccountPatchRequestSchema,
  },
  {
    method: 'post',
    path: '/accounts/:id/suspend',
    target: 'billing',
    answer: OperatorAccountSchema,
    summary: 'Suspend an account',
  },
  {
    method: 'post',
    path: '/accounts/:id/unsuspend',
    target: 'billing',
    answer: OperatorAccountSchema,
    summary: 'Lift a suspension',
  },
  {
    method: 'get',
    path: '/accounts/:id/api-keys',
    target: 'billing',
    answer: ApiKeyListSchema,
    summary: "List an account's API keys (names only)",
  },
  {
    method: 'post',
    path: '/accounts/:id/api-keys',
    target: 'billing',
    answer: IssuedApiKeySchema,
    summary: 'Create an API key (shown once)',
    body: ApiKeyCreateRequestSchema,
    status: 201,
  },
  {
    method: 'post',
    path: '/accounts/:id/api-keys/:name/regenerate',
    target: 'billing',
    answer: IssuedApiKeySchema,
    summary: 'Regenerate an API key; the old one stops at once',
  },
  {
    method: 'delete',
    path: '/accounts/:id/api-keys/:name',
    target: 'billing',
    summary: 'Delete an API key',
    status: 204,
  },
  {
    method: 'post',
    path: '/accounts/:id/credits',
    target: 'billing',
    answer: CreditResultSchema,
    summary: 'Credit DZD (Idempotency-Key)',
    body: CreditRequestSchema,
  },
  {
    method: 'get',
    path: '/accounts/:id/statement',
    target: 'billing',
    answer: StatementSchema,
    summary: 'Statement (?from, ?to; Accept: text/csv for CSV)',
  },
  {
    method: 'get',
    path: '/accounts/:id/webhook-secrets',
    target: 'dispatcher',
    summary: 'Active webhook signing secrets',
    accountMustExist: true,
  },
  {
    method: 'post',
    path: '/accounts/:id/webhook-secrets/rotate',
    target: 'dispatcher',
    summary:
      'Rotate the webhook signing secret: the current one signs beside the new one for the rotation window, an older previous one stops (limited per account and hour)',
    status: 201,
    accountMustExist: true,
    rateLimited: true,
  },
  {
    method: 'post',
    path: '/accounts/:id/webhook-secrets/expire-previous',
    target: 'dispatcher',
    summary:
      "End the previous webhook signing secret's rotation window now: only the current secret signs",
    accountMustExist: true,
  },
  {
    method: 'get',
    path: '/accounts/:id/webhook-deliveries',
    target: 'dispatcher',
    summary: 'Webhook deliveries of an account (?limit, ?cursor)',
    accountMustExist: true,
  },
  {
    method: 'post',
    path: '/webhook-deliveries/:id/redeliver',
    target: 'dispatcher',
    summary: 'Deliver a webhook again',
  },
  {
    method: 'post',
    path: '/scoped-tokens/revoke',
    target: 'billing',
    summary: 'Revoke any scoped token',
    body: ScopedTokenRevokeRequestSchema,
  },
  { method: 'get', path: '/models', target: 'billing', summary: 'The model catalog' },
  {
    method: 'get',
    path: '/nodes/health',
    target: 'billing',
    summary: "Each catalog node's last observed health (healthy, down, unknown)",
  },
  {
    method: 'put',
    path: '/models/*model',
    target: 'billing',
    summary: 'Create or replace a model (id may contain /)',
    body: ModelPutRequestSchema,
  },
  {
    method: 'get',
    path: '/ledger/entries',
    target: 'billing',
    answer: LedgerEntryPageSchema,
    summary: 'Ledger entries (?account, ?from, ?to, ?cursor), paged',
  },
  {
    method: 'get',
    path: '/ledger/report',
    target: 'billing',
    answer: PeriodReportSchema,
    summary:
      "Finance's period report: trial balance, customers' liability roll-forward, revenue by " +
      'day, model and tier, holds open at the end (?from, ?to: inclusive dates; ?time_zone; ' +
      '?limit, ?cursor for accounts; CSV: Accept: text/csv or ?format=csv, ' +
      '?section=roll_forward|trial_balance|revenue)',
  },
  {
    method: 'get',
    path: '/ledger/periods',
    target: 'billing',
    answer: ClosedPeriodListSchema,
    summary: 'Closed periods of the books, oldest first',
  },
  {
    method: 'get',
    path: '/ledger/periods/:period',
    target: 'billing',
    answer: ClosedPeriodSchema,
    summary: 'One closed period (YYYY-MM): its report at the close and its entries digest',
  },
  {
    method: 'post',
    path: '/ledger/periods/:period/close',
    target: 'billing',
    answer: ClosedPeriodSchema,
    body: PeriodCloseRequestSchema,
    status: 201,
    summary:
      'Close a month (YYYY-MM) once it has ended: its report and entries digest are kept, and ' +
      'the ledger check recomputes them (409 before the end or once closed)',
  },
  {
    method: 'get',
    path: '/ledger/check',
    target: 'billing',
    summary: 'Ledger invariant report',
    answer: LedgerCheckSchema,
  },
  {
    method: 'post',
    path: '/accounts/:id/invitations',
    target: 'billing',
    answer: InvitationCreatedSchema,
    summary: "Invite the account's owner to the dashboard (one-time link, shown once)",
    body: InvitationCreateRequestSchema,
    status: 201,
    invitationLink: true,
  },
  {
    method: 'post',
    path: '/operator-users',
    target: 'billing',
    summary: 'Create a dashboard user of the platform team (role operator or finance)',
    body: OperatorUserCreateRequestSchema,
    status: 201,
  },
  {
    method: 'get',
    path: '/usage',
    target: 'billing',
    answer: UsageListSchema,
    summary: 'Usage of all accounts (?from, ?to, ?group_by=day|model|key|day,model, ?account)',
  },
  {
    method: 'get',
    path: '/usage/requests',
    target: 'billing',
    summary:
      'Request log, newest first (?from, ?to, ?account, ?limit, ?cursor; CSV: ?format=csv or Accept: text/csv)',
  },
  {
    method: 'get',
    path: '/accounts/:id/requests/:requestId',
    target: 'billing',
    answer: ReceiptSchema,
    summary:
      "A request's receipt: tokens, prices, hold, settlement, refund, ledger ids (by X-Request-Id or job id)",
  },
  ...budgetRoutes('/accounts/:id/api-keys/:name/budget', 'an API key (it covers its tokens)'),
  ...budgetRoutes('/accounts/:id/scoped-tokens/:tokenId/budget', 'a scoped token'),
  ...keyLimitRoutes(
    '/accounts/:id/api-keys/:name/rate-limit',
    'an API key (they cover its tokens)',
  ),
  ...keyLimitRoutes('/accounts/:id/scoped-tokens/:tokenId/rate-limit', 'a scoped token'),
  {
    method: 'get',
    path: '/accounts/:id/api-keys/:name/models',
    target: 'billing',
    answer: ApiKeyModelsViewSchema,
    summary: 'The models an API key may use, and the scoped tokens it signs (empty: any model)',
  },
  {
    method: 'put',
    path: '/accounts/:id/api-keys/:name/models',
    target: 'billing',
    answer: ApiKeyModelsViewSchema,
    summary: 'Set the models an API key and the tokens it signs may use (empty list: any model)',
    body: ApiKeyModelsPutRequestSchema,
  },
  {
    method: 'get',
    path: '/accounts/:id/rate-limits',
    target: 'billing',
    answer: KeyRateLimitListSchema,
    summary: "The rate limits of an account's keys and scoped tokens that have their own",
  },
  {
    method: 'get',
    path: '/accounts/:id/budgets',
    target: 'billing',
    answer: BudgetListSchema,
    summary: "Every budget of an account, each with its current window's spend",
  },
  ...alertRoutes('/accounts/:id/alerts'),
];

/** Account alerts: signed webhooks on balance, budgets and projected exhaustion. */
function alertRoutes(path: string): AdminRoute[] {
  return [
    {
      method: 'get',
      path,
      target: 'billing',
      answer: AlertSettingsViewSchema,
      summary: "The account's alert settings (404 when it has none)",
    },
    {
      method: 'put',
      path,
      target: 'billing',
      answer: AlertSettingsViewSchema,
      summary:
        "Set the account's alerts: endpoint, balance threshold, budget shares, projected exhaustion",
      body: AlertSettingsPutRequestSchema,
      webhookUrlField: 'url',
    },
    {
      method: 'delete',
      path,
      target: 'billing',
      summary: "Remove the account's alert settings (no more alerts)",
      status: 204,
    },
  ];
}

/** Per-key rate limits: an API key's and a scoped token's own. */
function keyLimitRoutes(path: string, owner: string): AdminRoute[] {
  return [
    {
      method: 'get',
      path,
      target: 'billing',
      answer: KeyRateLimitViewSchema,
      summary: `The requests and tokens per minute of ${owner} (null: no limit of its own)`,
    },
    {
      method: 'put',
      path,
      target: 'billing',
      answer: KeyRateLimitViewSchema,
      summary: `Set the rate limits of ${owner}, beside the account's (an omitted one is removed)`,
      body: KeyRateLimitPutRequestSchema,
    },
    {
      method: 'delete',
      path,
      target: 'billing',
      summary: `Remove the rate limits of ${owner}`,
      status: 204,
    },
  ];
}

/** Budgets: the same three routes for an API key's and a scoped token's. */
function budgetRoutes(path: string, owner: string): AdminRoute[] {
  return [
    {
      method: 'get',
      path,
      target: 'billing',
      answer: BudgetViewSchema,
      summary: `The budget of ${owner}: spent, reserved and remaining in its window, and when it resets`,
    },
    {
      method: 'put',
      path,
      target: 'billing',
      answer: BudgetViewSchema,
      summary: `Set the budget of ${owner} (a change of limit, period or zone starts a new window at once)`,
      body: BudgetPutRequestSchema,
    },
    {
      method: 'delete',
      path,
      target: 'billing',
      summary: `Remove the budget of ${owner}`,
      status: 204,
    },
  ];
}

/** The operator API's answer schemas (contracts), each named once. */
export const ADMIN_ANSWER_SCHEMAS: readonly TSchema[] = [
  ...new Map(
    ADMIN_ROUTES.flatMap((route) => (route.answer ? [[route.answer.$id, route.answer]] : [])),
  ).values(),
];
