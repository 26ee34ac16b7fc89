/**
 * `node dist/ledger-check-cli.js`: runs the ledger invariant check against DATABASE_URL and
 * prints the report as JSON. Exit 0 when every invariant holds, 1 on a violation, 2 on error.
 */
import { createPrismaClient } from './db/client.js';
import { createLedgerService } from './ledger/index.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('DATABASE_URL is not set\n');
  process.exit(2);
}
const prisma = createPrismaClient(databaseUrl, { maxConnections: 2, statementTimeoutMs: 300_000 });
try {
  const ledger = createLedgerService({ prisma, clock: () => new Date() });
  const report = await ledger.checkInvariants();
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.ok ? 0 : 1;
} catch (error) {
  process.stderr.write(`ledger check failed: ${(error as Error).message}\n`);
  process.exitCode = 2;
} finally {
  await prisma.$disconnect();
}
