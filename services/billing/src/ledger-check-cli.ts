/**
 * `node dist/ledger-check-cli.js`: runs the check of the books (the ledger's invariants and every
 * closed period recomputed) against DATABASE_URL and
 * prints the report as JSON. Exit 0 when every invariant holds, 1 on a violation, 2 on error.
 */
import { createPrismaClient, pgPoolOf } from './db/client.js';
import { createLedgerService } from './ledger/index.js';
import { checkBooks, createReports } from './reports/index.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('DATABASE_URL is not set\n');
  process.exit(2);
}
const prisma = createPrismaClient(databaseUrl, { maxConnections: 2, statementTimeoutMs: 300_000 });
try {
  const clock = () => new Date();
  const ledger = createLedgerService({ prisma, clock });
  // Closed periods carry their own zone; the default zone is never used by the check.
  const { periods } = createReports(pgPoolOf(prisma), 'UTC', clock);
  const report = await checkBooks(ledger, periods);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.ok ? 0 : 1;
} catch (error) {
  process.stderr.write(`ledger check failed: ${(error as Error).message}\n`);
  process.exitCode = 2;
} finally {
  await prisma.$disconnect();
}
