/**
 * The finance role's privileges: SELECT on the finance views (migration
 * 20270118090000_finance_views) and nothing else; every table and sequence billing has is
 * listed with no privilege, so a grant made by hand is revoked at the next migration. The views
 * run with their owner's rights: the role reads what they select and no other column.
 */
import type { RuntimeGrants } from '@gateway/runtime';
import {
  nothing,
  RUNTIME_SEQUENCE_PRIVILEGES,
  RUNTIME_TABLE_PRIVILEGES,
} from './runtime-grants.js';

/** What finance's BI tools may read (docs/deployment.md, "Finance's read-only SQL door"). */
export const FINANCE_VIEWS = [
  'finance_entries',
  'finance_account_balances',
  'finance_daily_revenue',
  'finance_credits_and_refunds',
  'finance_closed_periods',
] as const;

export const FINANCE_GRANTS: RuntimeGrants = {
  tables: {
    ...nothing(Object.keys(RUNTIME_TABLE_PRIVILEGES)),
    ...Object.fromEntries(FINANCE_VIEWS.map((view) => [view, ['SELECT'] as const])),
  },
  sequences: nothing(Object.keys(RUNTIME_SEQUENCE_PRIVILEGES)),
};
