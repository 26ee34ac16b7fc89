import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
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

/** The `pg` pool under each client: the ledger's hot path queries it directly (no ORM). */
const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * A Prisma client over a bounded `pg` pool (`@prisma/adapter-pg`; no native query engine).
 * The same pool serves the ledger's hot path (`pgPoolOf`), so both share one connection bound.
 * Call `$disconnect()` on shutdown: it closes the pool.
 */
export function createPrismaClient(
  databaseUrl: string,
  options: PrismaClientOptions,
): PrismaClient {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.maxConnections,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    application_name: 'billing',
    // Idle connections must not keep a finished process (a CLI, a test) alive.
    allowExitOnIdle: true,
  });
  // An idle connection the server ends (PostgreSQL restarted, the database dropped) is taken out
  // of the pool by pg, which then emits 'error': without a listener that would crash billing.
  // The next query opens a new connection; readiness reports the database if it stays away.
  pool.on('error', () => {});
  // A connection lost while a transaction holds it (PostgreSQL restarted or failed over, the path
  // to it cut) makes pg emit 'error' on that client between its statements, when the pool's
  // listener is off it: unheard, that is an uncaught exception and billing exits (the nemesis saw
  // it). The statement in flight fails on its own; the pool drops the dead client on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
  });
  pools.set(prisma, pool);
  return prisma;
}

/** The pool a client from createPrismaClient runs on. */
export function pgPoolOf(prisma: PrismaClient): pg.Pool {
  const pool = pools.get(prisma);
  if (!pool) throw new Error('this Prisma client was not made by createPrismaClient');
  return pool;
}

/** One trivial statement through the client: readiness's "the database answers". */
export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRaw`SELECT 1`;
}

let templateName: string | undefined;

/** The runtime role of tests: billing in tests connects as it, as in a deployment. */
export const TEST_RUNTIME_ROLE = 'billing_runtime';
/** The worker's ledger role in test databases (ADR 0070): it may only end holds. */
export const TEST_WORKER_LEDGER_ROLE = 'worker_ledger';
/** Edge's admission role in test databases (ADR 0070): it may only admit API keys. */
export const TEST_EDGE_ADMISSION_ROLE = 'edge_admission';

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
  otherRoles: [TEST_WORKER_LEDGER_ROLE, TEST_EDGE_ADMISSION_ROLE],
  migrate: async (databaseUrl: string): Promise<void> => {
    await migrateDatabase(databaseUrl, {
      runtimeRole: TEST_RUNTIME_ROLE,
      workerRole: TEST_WORKER_LEDGER_ROLE,
      edgeRole: TEST_EDGE_ADMISSION_ROLE,
    });
  },
};
