/**
 * What billing's runtime database role may do, table by table: exactly the statements the
 * service issues (Prisma calls and raw SQL under src/), nothing more. The migration role owns
 * the schema; the runtime role owns nothing, so it can run no DDL, cannot disable, drop or
 * create triggers, and on the append-only ledger tables can only read and insert.
 *
 * Kept next to the migrations: a migration that adds a table or sequence adds its line here
 * (a test fails until it does). The mechanism (role checks, REVOKE/GRANT, one transaction) is
 * shared with the dispatcher: `applyRuntimeGrants` in @gateway/runtime.
 */
import type { RuntimeGrants, TablePrivilege } from '@gateway/runtime';

export const RUNTIME_TABLE_PRIVILEGES: Readonly<Record<string, readonly TablePrivilege[]>> = {
  // accounts.create / update (operator API); read everywhere.
  accounts: ['SELECT', 'INSERT', 'UPDATE'],
  // create, replace (updateMany), delete (deleteMany) of named keys.
  api_keys: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // registered, revoked, spend/reservation counters (FOR UPDATE); expired rows no hold names
  // are purged (SCOPED_TOKEN_PURGE_GRACE_MS).
  scoped_tokens: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // catalog upsert; models are never deleted.
  models: ['SELECT', 'INSERT', 'UPDATE'],
  // Append-only: the database's triggers refuse UPDATE/DELETE/TRUNCATE, and this role could
  // not even try.
  ledger_transactions: ['SELECT', 'INSERT'],
  ledger_entries: ['SELECT', 'INSERT'],
  // projections: created on first credit, updated (FOR UPDATE) on every money movement.
  account_balances: ['SELECT', 'INSERT', 'UPDATE'],
  // placed, settled/voided/expired by UPDATE; never deleted.
  holds: ['SELECT', 'INSERT', 'UPDATE'],
  // claims, completions, releases and the purge of expired records.
  idempotency_records: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // INSERT … ON CONFLICT DO UPDATE … RETURNING; old windows pruned with DELETE.
  rate_limit_windows: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Dashboard: users are created and get their password set; invitations are used
  // once; sessions are touched, signed out and purged after expiry.
  owner_users: ['SELECT', 'INSERT', 'UPDATE'],
  operator_users: ['SELECT', 'INSERT'],
  owner_invitations: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  dashboard_sessions: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Sign-ins per email: a point taken with INSERT … ON CONFLICT DO UPDATE, given back
  // with UPDATE, windows past their end purged.
  dashboard_sign_in_limits: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Written by a trigger when a hold ends and completed by the settle/void wrappers; deleted past
  // USAGE_RETENTION_DAYS (their sums kept in usage_purged_totals). Never written otherwise.
  usage_records: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  usage_purged_totals: ['SELECT', 'INSERT', 'UPDATE'],
  // Node health: upserted by worker reports; pruned (gone from the catalog, or a day old).
  node_health: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Budgets: set, changed and removed by the operator API and the dashboard; their
  // windows rolled and reservations taken by admission, released by the holds_budget_end trigger.
  budgets: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Account alerts: settings set and removed by the operator API and the
  // dashboard, claimed for evaluation (evaluated_at) and re-armed (balance_low_episode); events
  // inserted by the evaluator and marked published by the outbox, never deleted.
  alert_settings: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  alert_events: ['SELECT', 'INSERT', 'UPDATE'],
  // Per-key rate limits: windows counted by admission (INSERT … ON CONFLICT
  // DO UPDATE) and pruned with DELETE; returns inserted by the holds_rate_end trigger.
  key_request_windows: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  key_token_windows: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  key_token_returns: ['SELECT', 'INSERT', 'DELETE'],
  // Stored Responses state (sealed customer content): stored, read, deleted by a client and by
  // the retention purge; a background response's content is replaced once by its result (the
  // statement only touches one in progress). Items are inserted with their response and go with
  // it (the foreign key's cascade runs as the table's owner).
  stored_responses: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  stored_response_items: ['SELECT', 'INSERT'],
  // A background response's webhook: inserted with it, ended with it, marked published by the
  // outbox; it goes with its response (cascade, as the owner).
  response_webhooks: ['SELECT', 'INSERT', 'UPDATE'],
  // Closed periods: written once at the close, read by the report and the check, never changed.
  ledger_periods: ['SELECT', 'INSERT'],
  // A closed period's carried-forward balances: inserted with it, read by reports and the check.
  ledger_period_balances: ['SELECT', 'INSERT'],
  // The migrations' bookkeeping: read by readiness (db/schema-check.ts), never written.
  _prisma_migrations: ['SELECT'],
  // The function sources' checksums (the migrator's own): nothing for the runtime.
  _function_sources: [],
  // Finance's read-only views (finance-grants.ts): for the finance role, not billing.
  finance_entries: [],
  finance_account_balances: [],
  finance_daily_revenue: [],
  finance_credits_and_refunds: [],
  finance_closed_periods: [],
};

/** `ledger_entries.id` is a BIGSERIAL: inserting calls nextval (USAGE). */
export const RUNTIME_SEQUENCE_PRIVILEGES: Readonly<Record<string, readonly 'USAGE'[]>> = {
  ledger_entries_id_seq: ['USAGE'],
};

/** An admission step's signature: the request and the state so far (billing_admit_batch_v1). */
const ADMISSION_STEP = {
  args: 'billing_admission_request, billing_admission',
  privileges: ['EXECUTE'] as const,
};

/**
 * The ledger's hot-path functions (SECURITY INVOKER: they run with the role's own table
 * privileges above). The migration revokes EXECUTE from PUBLIC; only this role gets it. Keyed
 * by name, with the argument types that identify the function.
 */
export const RUNTIME_FUNCTION_PRIVILEGES: Readonly<
  Record<string, { args: string; privileges: readonly 'EXECUTE'[] }>
> = {
  ledger_cost_micro_dzd: {
    args: 'bigint, bigint, bigint, bigint, boolean',
    privileges: ['EXECUTE'],
  },
  ledger_settle_holds: {
    args: 'text[], bigint[], bigint[], text[], timestamptz',
    privileges: ['EXECUTE'],
  },
  // Its common case, set-based (ledger_settle_holds calls it).
  ledger_settle_pending_holds: {
    args: 'text[], bigint[], bigint[], text[], timestamptz',
    privileges: ['EXECUTE'],
  },
  // What a hold released unpublished may still charge (ledger_settle_holds calls it).
  ledger_released_hold_cap: { args: 'text, bigint', privileges: ['EXECUTE'] },
  ledger_void_hold: { args: 'text, timestamptz', privileges: ['EXECUTE'] },
  // An answer delivered to nobody (migration 20270106090000).
  ledger_refund_hold: { args: 'text, text, timestamptz', privileges: ['EXECUTE'] },
  // Admission in one round trip (migration 20261220090000, identity/pg-admission.ts).
  billing_worst_case_micro_dzd: {
    args: 'bigint, bigint, integer, integer, bigint, bigint, boolean',
    privileges: ['EXECUTE'],
  },
  // A batch of admissions in one call; its API-key-only form, and a key's last use, run as their
  // owner for edge's role (migration 20270127090000, ADR 0070). Billing admits through the first.
  billing_admit_batch_v1: { args: 'jsonb', privileges: ['EXECUTE'] },
  billing_admit_api_keys_v1: { args: 'jsonb', privileges: [] },
  billing_touch_api_key_v1: {
    args: 'text, text, timestamptz, double precision',
    privileges: ['EXECUTE'],
  },
  // Admission as steps (migration 20270116090000): the steps billing_admit_batch_v1 runs as they
  // were; the ones it replaced by a _v2 went one release later (migration 20270201090000).
  billing_admission_cost: ADMISSION_STEP,
  billing_admission_token_limit: ADMISSION_STEP,
  billing_admission_tokens_per_minute: ADMISSION_STEP,
  billing_admission_budgets: ADMISSION_STEP,
  // Admission set-based per batch (migration 20270131090000, ADR 0073): billing_admit_batch_v1's
  // reads and writes, and the steps that decide from what it read.
  billing_admission_count_requests: { args: 'text, bigint, integer', privileges: ['EXECUTE'] },
  billing_admission_hold_row: ADMISSION_STEP,
  billing_admission_place_holds: { args: 'holds[], text[], bigint[]', privileges: ['EXECUTE'] },
  billing_admission_credential_v2: {
    args: 'billing_admission_request, api_keys, accounts, scoped_tokens',
    privileges: ['EXECUTE'],
  },
  billing_admission_requests_v2: ADMISSION_STEP,
  billing_admission_model_v2: {
    args: 'billing_admission_request, billing_admission, models',
    privileges: ['EXECUTE'],
  },
  billing_admission_balance_v2: {
    args: 'billing_admission_request, billing_admission, bigint, holds',
    privileges: ['EXECUTE'],
  },
  billing_admission_hold_v2: ADMISSION_STEP,
  billing_admission_budget: {
    args: 'billing_admission, budgets, text, timestamptz',
    privileges: ['EXECUTE'],
  },
  billing_count_key_request: { args: 'text, bigint', privileges: ['EXECUTE'] },
  billing_key_tokens_used: { args: 'text, bigint', privileges: ['EXECUTE'] },
  billing_budget_window_start: { args: 'text, text, timestamptz', privileges: ['EXECUTE'] },
  billing_budget_resets_at: { args: 'text, text, timestamptz', privileges: ['EXECUTE'] },
  billing_budget_instant: {
    args: 'timestamp, text',
    privileges: ['EXECUTE'],
  },
  usage_settle_holds: {
    args:
      'text[], bigint[], bigint[], text[], timestamptz, bigint[], timestamptz[], bigint[], ' +
      'boolean[]',
    privileges: ['EXECUTE'],
  },
  usage_void_hold: {
    args: 'text, timestamptz, text, timestamptz, bigint',
    privileges: ['EXECUTE'],
  },
};

/** Every name listed with no privilege: another role's map revokes what it must not have. */
export const nothing = <K extends string>(names: readonly K[]) =>
  Object.fromEntries(names.map((name) => [name, [] as const]));

/** Billing's map, applied by the shared mechanism (@gateway/runtime) after migrating. */
export const BILLING_RUNTIME_GRANTS: RuntimeGrants = {
  tables: RUNTIME_TABLE_PRIVILEGES,
  sequences: RUNTIME_SEQUENCE_PRIVILEGES,
  functions: RUNTIME_FUNCTION_PRIVILEGES,
};
