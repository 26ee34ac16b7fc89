// The dashboard API's types and constants, defined once in packages/contracts.
export {
  DASHBOARD_LIMITS,
  type DashboardAccountDetail,
  type DashboardAccountList,
  type DashboardApiKeyList,
  type DashboardCreditRequest,
  type DashboardCreditResult,
  type DashboardIssuedApiKey,
  type DashboardOverview,
  type DashboardSession,
  type InvitationCreated,
} from '@gateway/contracts/dashboard-api';
