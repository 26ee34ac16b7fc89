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
