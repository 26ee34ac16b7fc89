import { describe, expect, it } from '@jest/globals';
import { busTestTopology, describeBusBehaviour } from './bus-behaviour.suite.js';
import { createInProcessBus } from './in-process-bus.js';
import { gatewayTopology } from './topology.js';

describeBusBehaviour('in-process', async (prefix) => {
  const bus = createInProcessBus({ topology: busTestTopology(prefix), drainTimeoutMs: 300 });
  await bus.start();
  return bus;
});

describe('in-process bus', () => {
  it('rejects an invalid topology up front', () => {
    const topology = gatewayTopology('p.');
    topology.queues[0]!.maxDeliveries = 0;
    expect(() => createInProcessBus({ topology })).toThrow(/maxDeliveries/);
  });
});
