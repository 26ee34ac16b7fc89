// The dashboard API's types and constants, defined once in packages/contracts: the dashboard's
// (dashboard-api.ts) and the operator API's answers it shows (operator-api.ts). Only
// browser-safe modules are imported for values; node-side ones reach the app as types only.
export {
  DASHBOARD_LIMITS,
  type DashboardAccount,
  type DashboardAccountDetail,
  type DashboardAccountList,
  type DashboardAccountPatchRequest,
  type DashboardApiKeyCreateRequest,
  type DashboardApiKeyList,
  type DashboardCreditRequest,
  type DashboardInvitationAcceptRequest,
  type DashboardCreditResult,
  type DashboardIssuedApiKey,
  type DashboardOverview,
  type DashboardRevealedWebhookSecret,
  type DashboardScopedToken,
  type DashboardScopedTokenList,
  type DashboardSession,
  type DashboardSignInRequest,
  type DashboardWebhookDelivery,
  type DashboardWebhookDeliveryList,
  type DashboardWebhookExpirePrevious,
  type DashboardWebhookRotation,
  type DashboardWebhookSecretList,
  type DashboardWebhookSettings,
  type InvitationCreated,
  type Page,
  type ScopedTokenState,
} from '@gateway/contracts/dashboard-api';
export {
  type UsageGroup,
  type UsageGroupBy,
  type UsageList,
  type UsageLogEntry,
  type UsageLogPage,
} from '@gateway/contracts/usage-api';
export type { Receipt } from '@gateway/contracts/receipts-api';
export type {
  ClosedPeriod,
  ClosedPeriodList,
  PeriodReport,
} from '@gateway/contracts/period-report-api';
export type { AlertSettingsPutRequest, AlertSettingsView } from '@gateway/contracts/alerts-api';

export type {
  DashboardCatalogModel as CatalogModel,
  DashboardCatalogModelList,
  DashboardCatalogNode as CatalogNode,
  DashboardLedgerEntryPage,
} from '@gateway/contracts/dashboard-console-api';
export {
  IMAGE_TOKENS_MAX,
  MODEL_MEDIA_DEFAULTS,
  type LedgerCheck,
  type OpenHold,
  type OpenHoldList,
  type Statement,
} from '@gateway/contracts/operator-api';
export { INPUT_MODALITIES, type InputModality } from '@gateway/contracts/schemas/chat-messages';
export type { ScopedTokenCreateRequest } from '@gateway/contracts/schemas/scoped-token';
export {
  BUDGET_PERIODS,
  type BudgetList,
  type BudgetPeriod,
  type BudgetPutRequest,
  type BudgetView,
} from '@gateway/contracts/budgets-api';
export {
  KEY_RATE_LIMITS,
  type KeyRateLimitList,
  type KeyRateLimitPutRequest,
  type KeyRateLimitView,
} from '@gateway/contracts/key-limits-api';
