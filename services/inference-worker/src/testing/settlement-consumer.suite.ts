import type { MessageBus } from '@gateway/messaging';
import { startBillingSettlements } from '../../../billing/src/testing/settlement-consumer.suite.js';
import { startTestBus } from './worker-harness.suite.js';
import type { WorkerFixture } from './worker-fixture.suite.js';

export interface BillingConsumer {
  bus: MessageBus;
  stop(): Promise<void>;
}

/** Billing's settlement consumer, in process, over the fixture's database and broker. */
export async function startSettlementConsumerFor(fixture: WorkerFixture): Promise<BillingConsumer> {
  const bus = await startTestBus(fixture.prefix);
  const consumer = await startBillingSettlements(fixture.billing, bus, fixture.prefix);
  return {
    bus,
    async stop() {
      await consumer.stop();
      await bus.close();
    },
  };
}
