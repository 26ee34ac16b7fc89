/**
 * The roles of other services that call billing's money functions directly (ADR 0070): each may
 * execute its few functions (SECURITY DEFINER: they run with their owner's table rights) and
 * nothing else. Every table, sequence and other function billing has is listed with no
 * privilege, so a grant made by hand is revoked at the next migration.
 */
import type { RuntimeGrants } from '@gateway/runtime';
import {
  nothing,
  RUNTIME_FUNCTION_PRIVILEGES,
  RUNTIME_SEQUENCE_PRIVILEGES,
  RUNTIME_TABLE_PRIVILEGES,
} from './runtime-grants.js';

/** The inference worker's: the two functions that end a hold (@gateway/ledger-calls). */
export const WORKER_FUNCTIONS = ['usage_settle_holds', 'usage_void_hold'] as const;

/** Edge's: admission of API keys, and a key's last use (@gateway/ledger-calls). */
export const EDGE_FUNCTIONS = ['billing_admit_api_keys_v1', 'billing_touch_api_key_v1'] as const;

/** A role that may execute `functions` and nothing else of billing's database. */
function functionsOnly(functions: readonly string[]): RuntimeGrants {
  return {
    tables: nothing(Object.keys(RUNTIME_TABLE_PRIVILEGES)),
    sequences: nothing(Object.keys(RUNTIME_SEQUENCE_PRIVILEGES)),
    functions: Object.fromEntries(
      Object.entries(RUNTIME_FUNCTION_PRIVILEGES).map(([name, { args }]) => [
        name,
        { args, privileges: functions.includes(name) ? (['EXECUTE'] as const) : ([] as const) },
      ]),
    ),
  };
}

export const WORKER_LEDGER_GRANTS = functionsOnly(WORKER_FUNCTIONS);
export const EDGE_ADMISSION_GRANTS = functionsOnly(EDGE_FUNCTIONS);
