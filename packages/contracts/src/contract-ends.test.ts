import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import * as contracts from './index.js';
import type { Route } from './routes.js';

/*
 * Every wire contract has both ends typed by it: the table below names, for each contract of
 * the API contract files, the files that produce it (build or send it) and the files that
 * consume it (read or validate it), and each of those files must import the contract's name
 * (or its `…Schema`) from @gateway/contracts. Every exported type of those files must be in
 * the table: a new contract without its two ends, or a shape defined again beside the contract,
 * fails here. A piece of a larger contract (an enum, a row) is listed as `partOf` it. Every
 * contract has both ends: the last known untyped ones (billing's hold, catalog, idempotency and
 * node-health answers) are typed, so the table lists no gap.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const CONTRACT_FILES = [
  'alerts-api.ts',
  'billing-api.ts',
  'budgets-api.ts',
  'key-limits-api.ts',
  'key-models-api.ts',
  'catalog-api.ts',
  'dashboard-api.ts',
  'dashboard-console-api.ts',
  'dispatcher-api.ts',
  'operator-api.ts',
  'receipts-api.ts',
  'responses-state-api.ts',
  'usage-api.ts',
  'period-report-api.ts',
].map((file) => `packages/contracts/src/${file}`);

// Billing
const BILLING_INTERNAL = 'services/billing/src/http/internal-routes.ts';
const BILLING_WIRE = 'services/billing/src/http/wire.ts';
const BILLING_ERROR_ANSWERS = 'services/billing/src/http/error-answers.ts';
const BILLING_IDEMPOTENCY = 'services/billing/src/http/idempotency-routes.ts';
const BILLING_KEY_STORE = 'services/billing/src/http/request-idempotency.ts';
const BILLING_ADMIN = 'services/billing/src/http/admin-routes.ts';
const BILLING_DASHBOARD = 'services/billing/src/dashboard/routes.ts';
const BILLING_USAGE = 'services/billing/src/usage/usage-service.ts';
const BILLING_CATALOG = 'services/billing/src/catalog/catalog.ts';
const BILLING_ACCOUNTS = 'services/billing/src/identity/accounts.ts';
const BILLING_SCOPED_TOKENS = 'services/billing/src/identity/scoped-tokens.ts';
const BILLING_USERS = 'services/billing/src/dashboard/users.ts';
const BILLING_NODE_HEALTH = 'services/billing/src/nodes/node-health-routes.ts';
const BILLING_NODES = 'services/billing/src/nodes/node-health.ts';
const BILLING_BUDGETS = 'services/billing/src/budgets/budgets.ts';
const BILLING_BUDGET_ROUTES = 'services/billing/src/http/budget-routes.ts';
const BILLING_ALERT_SETTINGS = 'services/billing/src/alerts/alert-settings.ts';
const BILLING_ALERT_ROUTES = 'services/billing/src/http/alert-routes.ts';
const BILLING_RECEIPTS = 'services/billing/src/receipts/receipts.ts';
const BILLING_RECEIPT_ROUTES = 'services/billing/src/receipts/receipt-routes.ts';
const BILLING_RESPONSES = 'services/billing/src/responses/stored-responses.ts';
const BILLING_RESPONSE_ROUTES = 'services/billing/src/responses/response-routes.ts';
// Billing's clients
const CLIENT = 'packages/billing-client/src/client.ts';
const CLIENT_PUBLISH_MARKS = 'packages/billing-client/src/publish-marks.ts';
const CLIENT_CATALOG = 'packages/billing-client/src/catalog-cache.ts';
const CLIENT_BATCHES = 'packages/billing-client/src/batches.ts';
const CLIENT_OPERATOR = 'packages/billing-client/src/operator-client.ts';
const CLIENT_DASHBOARD = 'packages/billing-client/src/dashboard-client.ts';
// The operator CLI
const CTL = 'packages/gatewayctl/src/commands.ts';
const CTL_DASHBOARD = 'packages/gatewayctl/src/dashboard-commands.ts';
const CTL_BUDGETS = 'packages/gatewayctl/src/budget-commands.ts';
const CTL_ALERTS = 'packages/gatewayctl/src/alert-commands.ts';
const CTL_KEY_LIMITS = 'packages/gatewayctl/src/key-limit-commands.ts';
const CTL_REPORT = 'packages/gatewayctl/src/report-commands.ts';
const BILLING_REPORT = 'services/billing/src/reports/period-report.ts';
const BILLING_REPORT_ROUTES = 'services/billing/src/reports/report-routes.ts';
const BILLING_CLOSED_PERIODS = 'services/billing/src/reports/closed-periods.ts';
const CTL_KEY_MODELS = 'packages/gatewayctl/src/key-model-commands.ts';
const BILLING_KEY_LIMITS = 'services/billing/src/rate-limits/key-rate-limits.ts';
const BILLING_KEY_LIMIT_ROUTES = 'services/billing/src/http/key-limit-routes.ts';
const CTL_RECEIPTS = 'packages/gatewayctl/src/receipt-commands.ts';
// Edge
const EDGE_ADMIN = 'services/edge/src/admin/admin-routes.ts';
const EDGE_SESSIONS = 'services/edge/src/dashboard/session-routes.ts';
const EDGE_OWNER = 'services/edge/src/dashboard/owner-routes.ts';
const EDGE_WEBHOOKS = 'services/edge/src/dashboard/owner-webhooks.ts';
const EDGE_OPERATOR = 'services/edge/src/dashboard/operator-routes.ts';
const EDGE_CONSOLE = 'services/edge/src/dashboard/operator-console.ts';
const EDGE_USAGE = 'services/edge/src/dashboard/usage-routes.ts';
const EDGE_RECEIPTS = 'services/edge/src/routes/receipts.ts';
const EDGE_DISPATCHER = 'services/edge/src/clients/dispatcher-client.ts';
const EDGE_ALERTS = 'services/edge/src/dashboard/alert-routes.ts';
const EDGE_SCOPED_TOKENS = 'services/edge/src/dashboard/owner-scoped-tokens.ts';
// The dispatcher
const DISPATCHER_ROUTES = 'services/dispatcher/src/http/internal-routes.ts';
const DISPATCHER_WIRE = 'services/dispatcher/src/http/wire.ts';
const DISPATCHER_BODIES = 'services/dispatcher/src/deliveries/bodies.ts';
// The dashboard app: its contract module, and the queries that send bodies or read pages
const APP = 'apps/dashboard/src/api/contract.ts';
const APP_QUERIES = 'apps/dashboard/src/api/queries.ts';
const APP_OWNER = 'apps/dashboard/src/api/owner-queries.ts';
const APP_OPERATOR = 'apps/dashboard/src/api/operator-queries.ts';
const APP_SESSION = 'apps/dashboard/src/api/session.ts';
const APP_ALERTS = 'apps/dashboard/src/api/alert-queries.ts';
const APP_KEY_LIMITS = 'apps/dashboard/src/api/key-limit-queries.ts';
const EDGE_SETTINGS = 'services/edge/src/dashboard/setting-routes.ts';

type Entry = { producers: string[]; consumers: string[] } | { partOf: string };

const ends = (producers: string[], consumers: string[]): Entry => ({ producers, consumers });
const partOf = (contract: string): Entry => ({ partOf: contract });

const CONTRACTS: Record<string, Entry> = {
  // billing-api.ts: edge and the worker ⇄ billing
  AuthenticateRequest: ends([CLIENT], [BILLING_INTERNAL]),
  AuthenticateResponse: ends([BILLING_INTERNAL], [CLIENT]),
  RateLimitDecision: partOf('AuthenticateResponse'),
  RateLimitScope: partOf('RateLimitDecision'),
  TokenRateLimit: partOf('RateLimitDecision'),
  Caller: partOf('AuthenticateResponse'),
  AdmissionRequest: ends([CLIENT], [BILLING_INTERNAL]),
  HoldId: partOf('AdmissionRequest'),
  AdmissionResponse: ends([BILLING_INTERNAL], [CLIENT]),
  AdmittedModel: partOf('AdmissionResponse'),
  ModelProvider: partOf('CatalogEntry'),
  NodeProtocol: partOf('CatalogEntry'),
  SettleRequest: ends([CLIENT], [BILLING_INTERNAL]),
  VoidRequest: ends([CLIENT], [BILLING_INTERNAL]),
  VoidOutcomeReason: partOf('VoidRequest'),
  SettleResponse: ends([BILLING_INTERNAL], [CLIENT]),
  VoidResponse: ends([BILLING_INTERNAL], [CLIENT]),
  RefundResponse: ends([BILLING_INTERNAL], [CLIENT]),
  AnswerDeliveredResponse: ends([BILLING_INTERNAL], [CLIENT]),
  PublishMarksRequest: ends([CLIENT_PUBLISH_MARKS], [BILLING_INTERNAL]),
  AdmissionBatchRequest: ends([CLIENT_BATCHES], [BILLING_INTERNAL]),
  SettleBatchRequest: ends([CLIENT_BATCHES], [BILLING_INTERNAL]),
  VoidBatchRequest: ends([CLIENT_BATCHES], [BILLING_INTERNAL]),
  BatchAnswer: ends([BILLING_INTERNAL], [CLIENT_BATCHES]),
  BatchItemAnswer: ends([BILLING_ERROR_ANSWERS], [CLIENT_BATCHES]),
  PublishMarksResponse: ends([BILLING_INTERNAL], [CLIENT]),
  HoldStatusResponse: ends([BILLING_INTERNAL], [CLIENT]),
  CatalogEntry: ends([BILLING_INTERNAL], [CLIENT, CLIENT_CATALOG]),
  CatalogListResponse: ends([BILLING_INTERNAL], [CLIENT]),
  BalanceResponse: ends([BILLING_WIRE], [CLIENT]),
  ScopedTokenCreated: ends([BILLING_SCOPED_TOKENS], [CLIENT]),
  ScopedTokenInspection: ends([BILLING_SCOPED_TOKENS], [CLIENT, CTL]),
  ScopedTokenRef: ends([CLIENT], [BILLING_INTERNAL]),
  StoredResponse: ends([CLIENT], [BILLING_KEY_STORE]),
  IdempotencyRef: ends([CLIENT], [BILLING_IDEMPOTENCY, BILLING_KEY_STORE]),
  IdempotencyClaimRequest: ends([CLIENT], [BILLING_IDEMPOTENCY]),
  IdempotencyCompleteRequest: ends([CLIENT], [BILLING_IDEMPOTENCY]),
  IdempotencyClaim: ends([BILLING_IDEMPOTENCY, BILLING_KEY_STORE], [CLIENT]),
  NodeHealthReport: ends([CLIENT], [BILLING_NODE_HEALTH]),
  NodeHealthAccepted: ends([BILLING_NODE_HEALTH], [CLIENT]),
  NodeHealthErrorKind: partOf('NodeHealthReport'),
  NodeHealthView: ends([BILLING_NODES], [EDGE_CONSOLE]),

  // budgets-api.ts: budgets through the operator API, and `GET /v1/key`
  BudgetPutRequest: ends(
    [CLIENT_OPERATOR, CTL_BUDGETS],
    [EDGE_ADMIN, BILLING_BUDGET_ROUTES, BILLING_BUDGETS],
  ),
  BudgetPeriod: partOf('BudgetPutRequest'),
  BudgetView: ends(
    [BILLING_BUDGETS, BILLING_BUDGET_ROUTES],
    [CLIENT_OPERATOR, EDGE_ADMIN, CTL_BUDGETS],
  ),
  BudgetList: ends(
    [BILLING_BUDGETS, BILLING_BUDGET_ROUTES],
    [CLIENT_OPERATOR, EDGE_ADMIN, CTL_BUDGETS],
  ),
  KeyInfo: ends([BILLING_BUDGET_ROUTES], [CLIENT]),

  // key-limits-api.ts: per-key rate limits through the operator API
  KeyRateLimitPutRequest: ends(
    [CTL_KEY_LIMITS, CLIENT_OPERATOR, APP_KEY_LIMITS],
    [EDGE_ADMIN, EDGE_SETTINGS, BILLING_KEY_LIMIT_ROUTES, BILLING_KEY_LIMITS],
  ),
  KeyRateLimitView: ends(
    [BILLING_KEY_LIMITS, BILLING_KEY_LIMIT_ROUTES],
    [CLIENT_OPERATOR, EDGE_ADMIN, CTL_KEY_LIMITS, APP_KEY_LIMITS],
  ),
  KeyRateLimitList: ends(
    [BILLING_KEY_LIMITS, BILLING_KEY_LIMIT_ROUTES],
    [CLIENT_OPERATOR, EDGE_ADMIN, CTL_KEY_LIMITS, APP_KEY_LIMITS],
  ),

  // key-models-api.ts: an API key's list of models through the operator API
  ApiKeyModelsPutRequest: ends([CTL_KEY_MODELS], [EDGE_ADMIN, BILLING_ADMIN]),
  ApiKeyModelsView: ends([BILLING_ADMIN], [EDGE_ADMIN, CTL_KEY_MODELS]),

  // alerts-api.ts: account alerts through the operator API and the dashboard, and
  // the webhook body the dispatcher sends (its receiver: the end-to-end test)
  AlertSettingsPutRequest: ends(
    [CLIENT_OPERATOR, CTL_ALERTS, APP_ALERTS],
    [EDGE_ADMIN, EDGE_ALERTS, BILLING_ALERT_ROUTES, BILLING_ALERT_SETTINGS],
  ),
  AlertSettingsView: ends(
    [BILLING_ALERT_SETTINGS, BILLING_ALERT_ROUTES],
    [CLIENT_OPERATOR, EDGE_ADMIN, EDGE_ALERTS, CTL_ALERTS, APP_ALERTS],
  ),
  AlertWebhookBody: ends([DISPATCHER_BODIES], ['test/e2e/alerts.test.ts']),
  AlertType: partOf('AlertWebhookBody'),
  AlertData: partOf('AlertWebhookBody'),
  AlertDataByType: partOf('AlertWebhookBody'),
  BalanceLowData: partOf('AlertWebhookBody'),
  BudgetThresholdData: partOf('AlertWebhookBody'),
  ExhaustionProjectedData: partOf('AlertWebhookBody'),

  // catalog-api.ts
  ModelPutRequest: ends([CLIENT_OPERATOR, APP_OPERATOR], [EDGE_ADMIN, BILLING_CATALOG]),

  // operator-api.ts: the operator API (`/admin/v1` → billing's `/internal/v1/admin`)
  AccountCreateRequest: ends([CLIENT_OPERATOR, CTL], [EDGE_ADMIN, EDGE_OPERATOR, BILLING_ADMIN]),
  AccountPatchRequest: ends([CLIENT_OPERATOR, CTL], [EDGE_ADMIN, BILLING_ADMIN]),
  ApiKeyCreateRequest: ends([CLIENT_OPERATOR, CTL], [EDGE_ADMIN, BILLING_ADMIN]),
  CreditRequest: ends([CLIENT_OPERATOR, CTL], [EDGE_ADMIN, BILLING_ADMIN]),
  ScopedTokenRevokeRequest: ends([EDGE_ADMIN, CTL], [BILLING_ADMIN]),
  OperatorUserCreateRequest: ends([EDGE_ADMIN, CTL_DASHBOARD], [BILLING_DASHBOARD]),
  OperatorUser: ends([BILLING_USERS], [CTL_DASHBOARD]),
  OperatorAccount: ends([BILLING_ADMIN, BILLING_ACCOUNTS], [CLIENT_OPERATOR, EDGE_ADMIN, CTL]),
  OperatorAccountDetail: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN, CTL]),
  OperatorAccountList: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN, CTL]),
  CreditResult: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN, CTL]),
  IssuedApiKey: ends([BILLING_ADMIN, BILLING_ACCOUNTS], [CLIENT_OPERATOR, EDGE_ADMIN, CTL]),
  ApiKeyList: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN]),
  Statement: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN, APP]),
  StatementLine: partOf('Statement'),
  LedgerEntryPage: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN]),
  LedgerEntry: partOf('LedgerEntryPage'),
  LedgerCheck: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_ADMIN, APP, CTL]),
  OpenHoldList: ends([BILLING_ADMIN], [CLIENT_OPERATOR, EDGE_CONSOLE, APP, CTL_RECEIPTS]),
  OpenHold: partOf('OpenHoldList'),
  CatalogModelList: ends([BILLING_ADMIN], [CLIENT_OPERATOR, CTL]),
  CatalogModel: ends([BILLING_ADMIN, BILLING_CATALOG], [CLIENT_OPERATOR, EDGE_CONSOLE, CTL]),
  CatalogNode: partOf('CatalogModel'),
  NodeHealthList: ends([BILLING_NODE_HEALTH], [CLIENT_OPERATOR]),

  // dashboard-api.ts: the browser ⇄ edge (`/dashboard/api`), edge ⇄ billing (`/dashboard`)
  DashboardRole: partOf('DashboardSession'),
  OperatorRole: partOf('OperatorUserCreateRequest'),
  DashboardSignInRequest: ends([APP_SESSION, CLIENT_DASHBOARD], [EDGE_SESSIONS, BILLING_DASHBOARD]),
  DashboardInvitationAcceptRequest: ends(
    [APP_SESSION, CLIENT_DASHBOARD],
    [EDGE_SESSIONS, BILLING_DASHBOARD],
  ),
  DashboardSession: ends([BILLING_DASHBOARD], [CLIENT_DASHBOARD, EDGE_SESSIONS, APP]),
  DashboardStartedSession: ends([BILLING_DASHBOARD], [CLIENT_DASHBOARD, EDGE_SESSIONS]),
  DashboardSessionTokenRequest: ends([CLIENT_DASHBOARD], [BILLING_DASHBOARD]),
  InvitationCreateRequest: ends(
    [CLIENT_OPERATOR, CTL_DASHBOARD],
    [EDGE_ADMIN, EDGE_OPERATOR, BILLING_DASHBOARD],
  ),
  InvitationCreated: ends([EDGE_OPERATOR], [EDGE_ADMIN, APP, CTL_DASHBOARD]),
  InvitationIssued: ends([BILLING_DASHBOARD], [CLIENT_OPERATOR, EDGE_OPERATOR, EDGE_ADMIN]),
  DashboardOverview: ends([BILLING_DASHBOARD, EDGE_OWNER], [CLIENT_DASHBOARD, APP]),
  DashboardApiKeyList: ends([EDGE_OWNER], [APP]),
  DashboardApiKey: partOf('DashboardApiKeyList'),
  DashboardApiKeyCreateRequest: ends([APP_QUERIES], [EDGE_OWNER]),
  DashboardIssuedApiKey: ends([EDGE_OWNER], [APP]),
  DashboardAccount: ends([EDGE_OPERATOR], [APP]),
  DashboardAccountList: ends([EDGE_OPERATOR], [APP_QUERIES]),
  DashboardAccountDetail: ends([EDGE_OPERATOR], [APP]),
  DashboardAccountPatchRequest: ends([APP_OPERATOR], [EDGE_CONSOLE]),
  DashboardCreditRequest: ends([APP], [EDGE_OPERATOR]),
  DashboardCreditResult: ends([EDGE_OPERATOR], [APP]),
  Page: partOf('DashboardLedgerEntryPage'),
  DashboardScopedTokenList: ends([BILLING_DASHBOARD], [CLIENT_DASHBOARD, APP_OWNER]),
  DashboardScopedToken: ends([BILLING_DASHBOARD], [CLIENT_DASHBOARD, APP]),
  ScopedTokenState: partOf('DashboardScopedToken'),
  DashboardScopedTokenCreated: ends([EDGE_SCOPED_TOKENS], [APP_OWNER]),
  DashboardWebhookSecretList: ends([EDGE_WEBHOOKS], [APP]),
  DashboardWebhookSecret: partOf('DashboardWebhookSecretList'),
  DashboardRevealedWebhookSecret: ends([EDGE_WEBHOOKS], [APP]),
  DashboardRevealedWebhookSecretList: ends([EDGE_WEBHOOKS], [APP_OWNER]),
  DashboardWebhookRotation: ends([EDGE_WEBHOOKS], [APP]),
  DashboardWebhookExpirePrevious: ends([EDGE_WEBHOOKS], [APP]),
  DashboardWebhookSettings: ends([EDGE_WEBHOOKS], [APP]),
  DashboardWebhookDeliveryList: ends([EDGE_WEBHOOKS], [APP_OWNER, APP_OPERATOR]),
  DashboardWebhookDelivery: ends([EDGE_WEBHOOKS], [APP]),
  DashboardCatalogModelList: ends([EDGE_CONSOLE], [APP_OPERATOR]),
  DashboardCatalogModel: ends([EDGE_CONSOLE], [APP]),
  DashboardCatalogNode: partOf('DashboardCatalogModel'),
  DashboardLedgerEntryPage: ends([EDGE_CONSOLE], [APP_OPERATOR]),

  // dispatcher-api.ts: edge ⇄ the dispatcher
  WebhookSigningSecret: ends([DISPATCHER_WIRE], [EDGE_DISPATCHER, EDGE_WEBHOOKS, CTL]),
  WebhookSigningSecretList: ends([DISPATCHER_ROUTES], [EDGE_DISPATCHER, CTL]),
  WebhookExpirePreviousResult: ends([DISPATCHER_ROUTES], [EDGE_DISPATCHER, CTL]),
  WebhookDeliveryPage: ends([DISPATCHER_ROUTES], [EDGE_DISPATCHER, CTL]),
  WebhookDelivery: ends([DISPATCHER_WIRE], [EDGE_DISPATCHER, EDGE_WEBHOOKS, CTL]),
  WebhookDeliveryAttempt: partOf('WebhookDelivery'),
  WebhookDeliveryStatus: partOf('WebhookDelivery'),

  // usage-api.ts: billing → edge → clients and the app
  UsageList: ends([BILLING_USAGE], [CLIENT, CLIENT_OPERATOR, EDGE_USAGE, EDGE_ADMIN, APP]),
  UsageGroup: partOf('UsageList'),
  UsageGroupBy: partOf('UsageList'),
  UsageLogPage: ends([BILLING_USAGE], [CLIENT, CLIENT_OPERATOR, EDGE_USAGE, APP]),
  UsageLogEntry: partOf('UsageLogPage'),
  OperatorUsageLogPage: partOf('UsageLogPage'),
  UsageOutcome: partOf('UsageLogEntry'),

  // receipts-api.ts: billing → edge → clients, the app and the CLI
  // Finance's period report (the month-end close).
  PeriodReport: ends([BILLING_REPORT], [EDGE_ADMIN, CTL_REPORT]),
  ReportCsvSection: partOf('PeriodReport'),
  PeriodCloseRequest: ends([EDGE_ADMIN, CTL_REPORT], [BILLING_REPORT_ROUTES]),
  ClosedPeriod: ends([BILLING_CLOSED_PERIODS, BILLING_REPORT_ROUTES], [EDGE_ADMIN, CTL_REPORT]),
  ClosedPeriodList: ends([BILLING_CLOSED_PERIODS, BILLING_REPORT_ROUTES], [EDGE_ADMIN, CTL_REPORT]),
  Receipt: ends(
    [BILLING_RECEIPTS, BILLING_RECEIPT_ROUTES],
    [CLIENT, CLIENT_OPERATOR, EDGE_RECEIPTS, EDGE_USAGE, EDGE_ADMIN, CTL_RECEIPTS, APP, APP_OWNER],
  ),
  ReceiptStatus: partOf('Receipt'),

  // responses-state-api.ts: edge (through the client) ⇄ billing's stored Responses state
  SaveResponseRequest: ends([CLIENT], [BILLING_RESPONSE_ROUTES, BILLING_RESPONSES]),
  ResponseRecord: ends([BILLING_RESPONSES, BILLING_RESPONSE_ROUTES], [CLIENT]),
  ResponseContextRequest: ends([CLIENT], [BILLING_RESPONSE_ROUTES, BILLING_RESPONSES]),
  ResponseContext: ends([BILLING_RESPONSES, BILLING_RESPONSE_ROUTES], [CLIENT]),
  DeletedResponse: ends([BILLING_RESPONSES, BILLING_RESPONSE_ROUTES], [CLIENT]),
  FinishResponseRequest: ends([CLIENT], [BILLING_RESPONSE_ROUTES, BILLING_RESPONSES]),
  FinishedResponse: ends([BILLING_RESPONSES, BILLING_RESPONSE_ROUTES], [CLIENT]),
  ResponseItemRecord: partOf('SaveResponseRequest'),
  ResponseWebhookBody: ends([DISPATCHER_BODIES], ['test/e2e/response-webhook.test.ts']),
  ResponseWebhookType: partOf('ResponseWebhookBody'),
  ResponseEndedData: partOf('ResponseWebhookBody'),
};

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The contracts a contract file exports: its types, and `XSchema` constants as `X`. */
function exportedContracts(file: string): string[] {
  const source = read(file);
  const types = [...source.matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]!);
  const schemas = [...source.matchAll(/^export const (\w+)Schema\b/gm)].map((m) => m[1]!);
  return [...new Set([...types, ...schemas])];
}

/**
 * Names a file imports (or re-exports) from `@gateway/contracts` or one of its modules; in the
 * dashboard app, also those it imports from its contract module that this re-exports.
 */
function contractImports(file: string): Set<string> {
  const names = new Set<string>();
  const statement =
    /(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(@gateway\/contracts(?:\/[\w/-]+)?|\.\/contract)'/g;
  for (const [, list, from] of read(file).matchAll(statement)) {
    const reExported = from === './contract' ? contractImports(APP) : undefined;
    for (const item of list!.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]!;
      if (name !== '' && (reExported?.has(name) ?? true)) names.add(name);
    }
  }
  return names;
}

/**
 * The route tables the contracts export (every export whose values are all routes), each with
 * the schemas its routes take and give: a new table counts without being listed here.
 */
const isRoute = (value: unknown): value is Route =>
  typeof value === 'object' && value !== null && 'method' in value && 'path' in value;
const ROUTE_TABLES: Record<string, Set<TSchema>> = Object.fromEntries(
  Object.entries(contracts as Record<string, unknown>).flatMap(([name, value]) =>
    typeof value === 'object' &&
    value !== null &&
    Object.values(value).length > 0 &&
    Object.values(value).every(isRoute)
      ? [[name, carried(value as Record<string, Route>)]]
      : [],
  ),
);

function carried(table: Record<string, Route & { publicAnswer?: TSchema }>): Set<TSchema> {
  return new Set(
    Object.values(table).flatMap((route) =>
      [route.body, route.answer, route.publicAnswer].filter((s) => s !== undefined),
    ),
  );
}

/**
 * Whether a file is typed by a contract: it imports its name or its schema, or a route table
 * with a route that takes or gives it (the route's types come from that schema).
 */
const imports = (file: string, contract: string) => {
  const names = contractImports(file);
  if (names.has(contract) || names.has(`${contract}Schema`)) return true;
  const schema = (contracts as Record<string, unknown>)[`${contract}Schema`];
  return [...names].some((name) => ROUTE_TABLES[name]?.has(schema as TSchema) === true);
};

const fullEntries = Object.entries(CONTRACTS).flatMap(([name, entry]) =>
  'partOf' in entry ? [] : [{ name, ...entry }],
);

describe('every wire contract has both ends', () => {
  it('lists every contract the contract files export', () => {
    const exported = CONTRACT_FILES.flatMap(exportedContracts);
    expect(exported.filter((name) => !(name in CONTRACTS))).toEqual([]);
    expect(Object.keys(CONTRACTS).filter((name) => !exported.includes(name))).toEqual([]);
  });

  it('has every named producer and consumer import the contract from @gateway/contracts', () => {
    const missing = fullEntries.flatMap(({ name, producers, consumers }) =>
      [...producers, ...consumers]
        .filter((file) => !imports(file, name))
        .map((file) => `${name} in ${file}`),
    );
    expect(missing).toEqual([]);
  });

  it('names both ends of every contract', () => {
    const oneSided = fullEntries.filter(
      ({ producers, consumers }) => producers.length === 0 || consumers.length === 0,
    );
    expect(oneSided.map(({ name }) => name)).toEqual([]);
  });

  it('lists a part only under a contract that has its ends', () => {
    for (const [name, entry] of Object.entries(CONTRACTS)) {
      if (!('partOf' in entry)) continue;
      let whole: Entry | undefined = CONTRACTS[entry.partOf];
      while (whole && 'partOf' in whole) whole = CONTRACTS[whole.partOf];
      expect({ name, whole: whole !== undefined }).toEqual({ name, whole: true });
    }
  });
});
