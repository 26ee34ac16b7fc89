export {
  createBillingClient,
  type Admission,
  type BillingClient,
  type BillingClientOptions,
  type SettleOutcome,
  type VoidOutcome,
} from './client.js';
export { PublishMarks, type DeferredMark } from './publish-marks.js';
export { type BatchKind, type BatchOptions, type DirectAdmissions } from './batches.js';
export { CatalogCache } from './catalog-cache.js';
export { credentialRefused, errorFromAnswer, rateLimitFromHeaders } from './wire-errors.js';
export { type DashboardBillingClient } from './dashboard-client.js';
export {
  OPERATOR_API_PREFIX,
  type BudgetOwnerRef,
  type OperatorClient,
} from './operator-client.js';
