import type { MessageBus } from '@gateway/messaging';
import { gatewayNames } from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { createPrismaClient } from '../../../billing/src/db/client.js';
import { createLedgerService } from '../../../billing/src/ledger/index.js';
import { startSettlementConsumer } from '../../../billing/src/settlements/settlement-consumer.js';
import { startTestBus } from './worker-harness.suite.js';
import type { WorkerFixture } from './worker-fixture.suite.js';

export interface BillingConsumer {
  bus: MessageBus;
  stop(): Promise<void>;
}

/** Billing's settlement consumer, in process, over the fixture's database and broker. */
export async function startSettlementConsumerFor(fixture: WorkerFixture): Promise<BillingConsumer> {
  const prisma = createPrismaClient(fixture.billing.databaseUrl, { maxConnections: 4 });
  const ledger = createLedgerService({ prisma, clock: () => new Date() });
  const bus = await startTestBus(fixture.prefix);
  const consumer = await startSettlementConsumer({
    bus,
    names: gatewayNames(fixture.prefix),
    ledger,
    logger: createLogger({ service: 'billing', level: 'silent' }),
    minBackoffMs: 20,
  });
  return {
    bus,
    async stop() {
      await consumer.cancel();
      await bus.close();
      await prisma.$disconnect();
    },
  };
}
