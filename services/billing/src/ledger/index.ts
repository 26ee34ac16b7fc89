export {
  CREDIT_IDEMPOTENCY_SCOPE,
  MAX_ENTRIES_PAGE,
  STATEMENT_CSV_HEADER,
  createLedgerService,
  statementToCsv,
  type LedgerService,
  type LedgerServiceDeps,
  type SweeperOptions,
} from './ledger-service.js';
export {
  CUSTOMER_PREFIX,
  FUNDING_ACCOUNT,
  REVENUE_ACCOUNT,
  customerAccount,
} from './ledger-accounts.js';
export { microDzdToFixedDzd } from './money-format.js';
export type * from './types.js';
export { budgetExhausted, holdIdTaken } from './holds.js';
export { INSUFFICIENT_BALANCE_MESSAGE } from './db-errors.js';
