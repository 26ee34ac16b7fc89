export { int8, settleHolds, voidHold } from './hold-end-calls.js';
export {
  requireTokenCount,
  settleRequestOf,
  voidReportOf,
  type HoldUsage,
  type HoldVoidUsage,
} from './requests.js';
export type {
  Balance,
  HoldState,
  HoldStatus,
  ItemFailure,
  RunReport,
  SettleInput,
  SettleOutcome,
  VoidOutcome,
  VoidReport,
} from './outcomes.js';
export {
  isRetryableSqlError,
  itemError,
  MAX_ATTEMPTS,
  retryStatement,
  settleUntilFinal,
  type FinalSettleOutcome,
} from './until-final.js';
export { holdConflict, holdNotFound, holdUnpriced, type HoldConflictResult } from './refusals.js';
export {
  budgetExhausted,
  holdIdTaken,
  INSUFFICIENT_BALANCE_MESSAGE,
  modelNotFound,
} from './refusals.js';
export { DEFAULT_HOLD_TTL_MS } from './admission-types.js';
export type {
  Admission,
  AdmitRequest,
  CheckedAdmitRequest,
  CredentialAdmitRequest,
  ModelNode,
  ModelRecord,
  PlacedHold,
  Principal,
  PrincipalToken,
  WebhookFormat,
} from './admission-types.js';
export {
  admitBatchStatement,
  admitRows,
  NO_TOKEN,
  statementParams,
  type TokenStatementParams,
  type AdmitColumns,
  type AdmitFunction,
  type AdmitRow,
  type AdmitStatementParams,
} from './admit-statement.js';
export {
  admissionOutcome,
  admissionToWire,
  admitRequestOf,
  callerOf,
  checkEstimate,
  principalOf,
  toAdmission,
  type Admitted,
  type RowCredential,
} from './admission-answer.js';
export { BAD_SIGNATURE_REASON, invalidKey } from './admission-refusals.js';
export {
  decideTokens,
  decideWindows,
  RATE_LIMIT_WINDOW_MS,
  rateLimitDecision,
  rateLimitError,
  requestWindows,
  tokenRateLimitMessage,
  tokenWindows,
  windowStartMs,
  type RequestWindow,
  type TokenDecision,
  type TokenWindow,
} from './rate-windows.js';
export {
  API_KEY_BODY_LENGTH,
  API_KEY_PREFIX,
  bearerCredential,
  looksLikeApiKey,
} from './api-keys.js';
export { ApiKeyLastUsed, type LastUsedOptions } from './last-used.js';
export {
  carriesApiKey,
  createApiKeyAdmission,
  type AdmitApiKeys,
  type ApiKeyAdmissionItem,
  type ApiKeyAdmissionOptions,
  type ApiKeyAdmissionResult,
} from './api-key-admission.js';
