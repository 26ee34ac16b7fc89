import type { MessageBus } from '@gateway/messaging';
import { gatewayNames } from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { createPrismaClient } from '../db/client.js';
import { createLedgerService } from '../ledger/index.js';
import { startSettlementConsumer } from '../settlements/settlement-consumer.js';
import type { BillingUnderTest } from './billing-under-test.suite.js';

/**
 * Billing's settlement consumer (what applies the worker's queued settlements when billing was
 * unreachable), in process, over the database of a `startBilling` billing, on the caller's bus
 * and queue prefix. Other services' tests start it here rather than reaching into billing.
 */
export async function startBillingSettlements(
  billing: Pick<BillingUnderTest, 'databaseUrl'>,
  bus: MessageBus,
  prefix: string,
): Promise<{ stop(): Promise<void> }> {
  const prisma = createPrismaClient(billing.databaseUrl, { maxConnections: 4 });
  const ledger = createLedgerService({ prisma, clock: () => new Date() });
  const consumer = await startSettlementConsumer({
    bus,
    names: gatewayNames(prefix),
    ledger,
    logger: createLogger({ service: 'billing', level: 'silent' }),
    // Retries of a settlement billing refused come fast in a test.
    minBackoffMs: 20,
  });
  return {
    async stop() {
      await consumer.cancel();
      await prisma.$disconnect();
    },
  };
}
