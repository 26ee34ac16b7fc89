/**
 * Least-privilege database roles: a service runs as a role that owns nothing and holds exactly
 * the table privileges its queries need; migrations run as the schema's owner, which then
 * applies the service's privilege map here. Each service keeps its map next to its migrations
 * (a migration that adds a table says what the runtime role may do with it).
 *
 * `SELECT … FOR UPDATE` needs UPDATE; `INSERT … ON CONFLICT DO UPDATE` needs INSERT and UPDATE;
 * `RETURNING` needs SELECT; inserting into a serial column needs USAGE on its sequence.
 */
import pg from 'pg';
import { inTransaction } from './pg-transaction.js';

export type TablePrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

export interface RuntimeGrants {
  /** Every table of the schema, each with what the runtime role may do (`[]`: nothing). */
  tables: Readonly<Record<string, readonly TablePrivilege[]>>;
  /** Every sequence of the schema. */
  sequences: Readonly<Record<string, readonly 'USAGE'[]>>;
  /** Functions the role may call, by name, with the argument types that identify each. */
  functions?: Readonly<Record<string, { args: string; privileges: readonly 'EXECUTE'[] }>>;
}

async function assertRestrictable(client: pg.Client, role: string): Promise<void> {
  const { rows } = await client.query<{ superuser: boolean; acts_as_owner: boolean }>(
    `SELECT rolsuper AS superuser, pg_has_role(rolname, current_user, 'MEMBER') AS acts_as_owner
       FROM pg_roles WHERE rolname = $1`,
    [role],
  );
  const row = rows[0];
  if (!row) {
    throw new Error(`runtime database role ${role} does not exist: create it first (LOGIN)`);
  }
  // Either would leave the role unrestricted whatever is granted or revoked below.
  if (row.superuser || row.acts_as_owner) {
    throw new Error(
      `runtime database role ${role} is a superuser or can act as the migration role: ` +
        'it must be a separate role that owns nothing',
    );
  }
}

function grantStatements(role: string, grants: RuntimeGrants): string[] {
  const grantee = pg.escapeIdentifier(role);
  const statements = [
    // CONNECT may have been revoked from PUBLIC (docker-compose's init script does).
    `DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), ${pg.escapeLiteral(role)}); END $$`,
    `GRANT USAGE ON SCHEMA public TO ${grantee}`,
    `REVOKE CREATE ON SCHEMA public FROM ${grantee}`,
  ];
  interface GrantedObject {
    kind: 'TABLE' | 'SEQUENCE' | 'FUNCTION';
    name: string;
    /** A function's argument types, which identify it. */
    signature: string;
    privileges: readonly string[];
  }
  const plain = (kind: GrantedObject['kind'], map: Readonly<Record<string, readonly string[]>>) =>
    Object.entries(map).map(([name, privileges]) => ({ kind, name, signature: '', privileges }));
  const objects: GrantedObject[] = [
    ...plain('TABLE', grants.tables),
    ...plain('SEQUENCE', grants.sequences),
    ...Object.entries(grants.functions ?? {}).map(([name, { args, privileges }]) => ({
      kind: 'FUNCTION' as const,
      name,
      signature: `(${args})`,
      privileges,
    })),
  ];
  for (const { kind, name, signature, privileges } of objects) {
    const object = `${kind} public.${pg.escapeIdentifier(name)}${signature}`;
    statements.push(`REVOKE ALL ON ${object} FROM ${grantee}`);
    if (privileges.length > 0) {
      statements.push(`GRANT ${privileges.join(', ')} ON ${object} TO ${grantee}`);
    }
  }
  return statements;
}

/**
 * Gives `role` exactly `grants` (REVOKE ALL, then GRANT, per object: idempotent), in one
 * transaction, after checking the role exists and would be restricted at all. Objects the map
 * does not list (a newer release's) are left alone. Run by the owner, after migrating.
 */
export async function applyRuntimeGrants(
  client: pg.Client,
  role: string,
  grants: RuntimeGrants,
): Promise<void> {
  await assertRestrictable(client, role);
  try {
    await inTransaction(client, async () => {
      for (const statement of grantStatements(role, grants)) await client.query(statement);
    });
  } catch (error) {
    throw new Error(`granting ${role} its privileges failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
