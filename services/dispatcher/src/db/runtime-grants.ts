/**
 * What the dispatcher's runtime database role may do, table by table: exactly the statements
 * under src/ issue, nothing more (the mechanism is `applyRuntimeGrants` in @gateway/runtime).
 * The migration role owns the schema; the runtime role owns nothing, so it can run no DDL,
 * create or change no trigger or function, and TRUNCATE nothing.
 *
 * Kept next to the migrations: a migration that adds a table or sequence adds its line here
 * (src/db/runtime-role.integration.test.ts fails until it does).
 */
import type { RuntimeGrants } from '@gateway/runtime';

export const DISPATCHER_RUNTIME_GRANTS: RuntimeGrants = {
  tables: {
    // Read to sign (secret-repository), created on first need and by rotations (INSERT …
    // RETURNING), given an end by a rotation (UPDATE), deleted once expired, when a rotation
    // replaces the previous one, or when the owner expires the previous one now.
    webhook_secrets: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
    // The rotation log of the per-account limit: counted, appended, purged after the hour.
    webhook_secret_rotations: ['SELECT', 'INSERT', 'DELETE'],
    // Intake inserts (ON CONFLICT DO NOTHING); claims (FOR UPDATE SKIP LOCKED), attempt
    // results, redelivery and the payload purge update. Rows are never deleted: the purge only
    // clears the sealed payload.
    webhook_deliveries: ['SELECT', 'INSERT', 'UPDATE'],
    // The attempt log: appended and listed, never changed.
    webhook_attempts: ['SELECT', 'INSERT'],
    // Read at start to wait for the schema this code needs; only the migration writes it.
    dispatcher_migrations: ['SELECT'],
  },
  sequences: {},
};
