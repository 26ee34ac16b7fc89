/**
 * What billing's runtime database role may do, table by table: exactly the statements the
 * service issues (Prisma calls and raw SQL under src/), nothing more. The migration role owns
 * the schema; the runtime role owns nothing, so it can run no DDL, cannot disable, drop or
 * create triggers, and on the append-only ledger tables can only read and insert.
 *
 * Kept next to the migrations: a migration that adds a table or sequence adds its line here
 * (a test fails until it does). `SELECT … FOR UPDATE` needs UPDATE; `INSERT … ON CONFLICT DO
 * UPDATE` needs INSERT and UPDATE; `RETURNING` needs SELECT.
 */
import pg from 'pg';

type TablePrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

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
  // The migrations' bookkeeping: the service never reads it.
  _prisma_migrations: [],
};

/** `ledger_entries.id` is a BIGSERIAL: inserting calls nextval (USAGE). */
export const RUNTIME_SEQUENCE_PRIVILEGES: Readonly<Record<string, readonly 'USAGE'[]>> = {
  ledger_entries_id_seq: ['USAGE'],
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
  ledger_void_hold: { args: 'text, timestamptz', privileges: ['EXECUTE'] },
};

interface RoleFacts {
  exists: boolean;
  superuser: boolean;
  /** The runtime role is, or can act as, the role applying the grants (an owner). */
  actsAsOwner: boolean;
}

async function roleFacts(client: pg.Client, role: string): Promise<RoleFacts> {
  const { rows } = await client.query<{ superuser: boolean; acts_as_owner: boolean }>(
    `SELECT rolsuper AS superuser, pg_has_role(rolname, current_user, 'MEMBER') AS acts_as_owner
       FROM pg_roles WHERE rolname = $1`,
    [role],
  );
  const row = rows[0];
  return {
    exists: row !== undefined,
    superuser: row?.superuser ?? false,
    actsAsOwner: row?.acts_as_owner ?? false,
  };
}

/** Refuses a runtime role that would not be restricted at all. */
async function assertRestrictable(client: pg.Client, role: string): Promise<void> {
  const facts = await roleFacts(client, role);
  if (!facts.exists) {
    throw new Error(`runtime database role ${role} does not exist: create it first (LOGIN)`);
  }
  if (facts.superuser || facts.actsAsOwner) {
    throw new Error(
      `runtime database role ${role} is a superuser or can act as the migration role: ` +
        'it must be a separate role that owns nothing',
    );
  }
}

function grantStatements(role: string): string[] {
  const grantee = pg.escapeIdentifier(role);
  const statements = [
    // CONNECT may have been revoked from PUBLIC (docker-compose's init script does).
    `DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), ${pg.escapeLiteral(role)}); END $$`,
    `GRANT USAGE ON SCHEMA public TO ${grantee}`,
    `REVOKE CREATE ON SCHEMA public FROM ${grantee}`,
  ];
  const objects = [
    ...Object.entries(RUNTIME_TABLE_PRIVILEGES).map(([name, privileges]) => ({
      kind: 'TABLE',
      name,
      args: '',
      privileges,
    })),
    ...Object.entries(RUNTIME_SEQUENCE_PRIVILEGES).map(([name, privileges]) => ({
      kind: 'SEQUENCE',
      name,
      args: '',
      privileges,
    })),
    ...Object.entries(RUNTIME_FUNCTION_PRIVILEGES).map(([name, { args, privileges }]) => ({
      kind: 'FUNCTION',
      name,
      args: `(${args})`,
      privileges,
    })),
  ];
  for (const { kind, name, privileges, args } of objects) {
    const object = `${kind} public.${pg.escapeIdentifier(name)}${args}`;
    statements.push(`REVOKE ALL ON ${object} FROM ${grantee}`);
    if (privileges.length > 0) {
      statements.push(`GRANT ${privileges.join(', ')} ON ${object} TO ${grantee}`);
    }
  }
  return statements;
}

/**
 * Gives `role` exactly the privileges above (REVOKE ALL, then GRANT, per object: idempotent),
 * in one transaction. Objects this version does not list (a newer release's) are left alone.
 * Run by the migration role after migrating.
 */
export async function applyRuntimeGrants(client: pg.Client, role: string): Promise<void> {
  await assertRestrictable(client, role);
  await client.query('BEGIN');
  try {
    for (const statement of grantStatements(role)) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`granting ${role} its privileges failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
