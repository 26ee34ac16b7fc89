import { describe, expect, it } from '@jest/globals';
import { serviceBlock } from './inference-flow.js';

const final = { jobId: 'chatcmpl-1', seq: 0, type: 'final' as const };

describe('serviceBlock', () => {
  it('carries the settled cost and the balance after it', () => {
    expect(serviceBlock({ ...final, costMicroDzd: '1500', balanceMicroDzd: '999998500' })).toEqual({
      cost_dzd: 0.0015,
      balance_dzd: 999.9985,
    });
  });

  // Issue 22, item 9: billing unreachable, the settlement queued; the cost is still exact.
  it('says the settlement is pending, with the cost and without a balance', () => {
    expect(serviceBlock({ ...final, costMicroDzd: '1500', settlementPending: true })).toEqual({
      cost_dzd: 0.0015,
      settlement: 'pending',
    });
  });

  it('lists dropped parameters sorted', () => {
    expect(serviceBlock({ ...final, warnings: ['b', 'a'] })).toEqual({ warnings: ['a', 'b'] });
  });
});
