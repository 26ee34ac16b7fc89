import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface DatabaseTemplate {
  /** Name of the template database; one per schema version of a service. */
  name: string;
  /**
   * The restricted role the service runs as. Created on the cluster (login, no password: the
   * test cluster trusts loopback) before `migrate`, which grants it what the service needs.
   */
  runtimeRole?: string;
  /** Other login roles `migrate` grants something (billing's: the worker's ledger role). */
  otherRoles?: readonly string[];
  /** Brings an empty database (given by URL) to the service's current schema. */
  migrate(databaseUrl: string): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The same database, connected to as `role` (no password: trust authentication). */
export function urlAsRole(url: string, role: string): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(role);
  parsed.password = '';
  return parsed.toString();
}

/**
 * Creates a login role if the cluster has none of that name (and sets its password when one is
 * given). Roles are cluster-wide, so concurrent callers are serialised by an advisory lock.
 */
export async function ensureLoginRole(
  adminUrl: string,
  role: string,
  password?: string,
): Promise<void> {
  const identifier = pg.escapeIdentifier(role);
  await withAdminClient(adminUrl, async (client) => {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(727275)');
      const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      if (found.rowCount === 0) await client.query(`CREATE ROLE ${identifier} LOGIN`);
      if (password !== undefined) {
        await client.query(`ALTER ROLE ${identifier} PASSWORD ${pg.escapeLiteral(password)}`);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  });
}

async function withAdminClient<T>(
  adminUrl: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates a fresh database for one test file, cloned from a migrated template. The template
 * is built once per cluster; an advisory lock serialises builders and clones across Jest
 * workers (CREATE DATABASE ... TEMPLATE fails while another session uses the template).
 */
export async function createIsolatedDatabase(
  adminUrl: string,
  template?: DatabaseTemplate,
): Promise<string> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock(727274)');
    try {
      if (template) {
        const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
          template.name,
        ]);
        if (exists.rowCount === 0) {
          if (template.runtimeRole) await ensureLoginRole(adminUrl, template.runtimeRole);
          for (const role of template.otherRoles ?? []) await ensureLoginRole(adminUrl, role);
          await client.query(`CREATE DATABASE ${quoteIdent(template.name)}`);
          try {
            await template.migrate(withDatabase(adminUrl, template.name));
          } catch (error) {
            // A half-migrated template would poison every later clone.
            await client.query(`DROP DATABASE ${quoteIdent(template.name)} WITH (FORCE)`);
            throw error;
          }
        }
        await client.query(
          `CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template.name)}`,
        );
      } else {
        await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(727274)');
    }
  });
  return withDatabase(adminUrl, name);
}

/** Drops a database made by createIsolatedDatabase, closing any connections left open. */
export async function dropIsolatedDatabase(adminUrl: string, databaseUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  await withAdminClient(adminUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
  );
}
