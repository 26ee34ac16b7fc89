import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface DatabaseTemplate {
  /** Name of the template database; one per schema version of a service. */
  name: string;
  /** Brings an empty database (given by URL) to the service's current schema. */
  migrate(databaseUrl: string): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
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
