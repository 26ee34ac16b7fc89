/**
 * The inference worker's ledger role (ADR 0070): it may execute the two functions that end a
 * hold, `usage_settle_holds` and `usage_void_hold` (SECURITY DEFINER: they run with their
 * owner's table rights), and nothing else. Every table, sequence and other function billing has
 * is listed with no privilege, so a grant made by hand is revoked at the next migration.
 */
import type { RuntimeGrants } from '@gateway/runtime';
import {
  nothing,
  RUNTIME_FUNCTION_PRIVILEGES,
  RUNTIME_SEQUENCE_PRIVILEGES,
  RUNTIME_TABLE_PRIVILEGES,
} from './runtime-grants.js';

/** The functions the worker calls (@gateway/ledger-calls). */
export const WORKER_FUNCTIONS = ['usage_settle_holds', 'usage_void_hold'] as const;

export const WORKER_LEDGER_GRANTS: RuntimeGrants = {
  tables: nothing(Object.keys(RUNTIME_TABLE_PRIVILEGES)),
  sequences: nothing(Object.keys(RUNTIME_SEQUENCE_PRIVILEGES)),
  functions: Object.fromEntries(
    Object.entries(RUNTIME_FUNCTION_PRIVILEGES).map(([name, { args }]) => [
      name,
      {
        args,
        privileges: (WORKER_FUNCTIONS as readonly string[]).includes(name)
          ? (['EXECUTE'] as const)
          : ([] as const),
      },
    ]),
  ),
};
