import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { migrateDatabase, migrationsFingerprint } from './migrate.js';

export { Prisma, PrismaClient } from '../generated/prisma/client.js';

export interface PrismaClientOptions {
  /** Upper bound of the connection pool. */
  maxConnections: number;
  /** How long a query waits for a free connection before failing; 5 s by default. */
  connectionTimeoutMs?: number;
  /** Server-side limit per statement; 30 s by default. */
  statementTimeoutMs?: number;
}

/**
 * A Prisma client over a bounded `pg` pool (`@prisma/adapter-pg`; no native query engine).
 * Call `$disconnect()` on shutdown: it closes the pool.
 */
export function createPrismaClient(
  databaseUrl: string,
  options: PrismaClientOptions,
): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    max: options.maxConnections,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    application_name: 'billing',
  });
  return new PrismaClient({ adapter });
}

let templateName: string | undefined;

/** The runtime role of tests: billing in tests connects as it, as in a deployment. */
export const TEST_RUNTIME_ROLE = 'billing_runtime';

/**
 * Test template for `createTestDatabase` (@gateway/testing): a database migrated once per
 * cluster and cloned per test file. Its name carries a digest of the migrations, so a new or
 * changed migration gets a new template instead of a stale one. Read lazily: the service itself
 * never touches the migrations directory when it only imports the client.
 */
export const billingDatabaseTemplate = {
  get name(): string {
    templateName ??= `billing_template_${migrationsFingerprint()}`;
    return templateName;
  },
  runtimeRole: TEST_RUNTIME_ROLE,
  migrate: async (databaseUrl: string): Promise<void> => {
    await migrateDatabase(databaseUrl, { runtimeRole: TEST_RUNTIME_ROLE });
  },
};
