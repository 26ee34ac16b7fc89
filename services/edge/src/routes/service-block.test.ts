import { describe, expect, it } from '@jest/globals';
import { finalChunk } from './chat-completions.js';
import { serviceBlock } from './service-block.js';

const final = { jobId: 'chatcmpl-1', seq: 0, type: 'final' as const };

describe('serviceBlock', () => {
  it('carries the settled cost and the balance after it', () => {
    expect(serviceBlock({ ...final, costMicroDzd: '1500', balanceMicroDzd: '999998500' })).toEqual({
      cost_dzd: 0.0015,
      balance_dzd: 999.9985,
      hold_id: 'chatcmpl-1',
    });
  });

  // Billing unreachable, the settlement queued; the cost is still exact.
  it('says the settlement is pending, with the cost and without a balance', () => {
    expect(serviceBlock({ ...final, costMicroDzd: '1500', settlementPending: true })).toEqual({
      cost_dzd: 0.0015,
      settlement: 'pending',
      hold_id: 'chatcmpl-1',
    });
  });

  it('lists dropped parameters sorted', () => {
    expect(serviceBlock({ ...final, warnings: ['b', 'a'] })).toEqual({
      warnings: ['a', 'b'],
      hold_id: 'chatcmpl-1',
    });
  });
});

// The stream's last chunk carries the cost in its `usage`, as peers extend it.
describe('finalChunk', () => {
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const data = { object: 'chat.completion.chunk', choices: [], usage };

  it("adds the settled cost to the final chunk's usage", () => {
    expect(finalChunk({ ...final, data, costMicroDzd: '1500', balanceMicroDzd: '1' })).toEqual({
      ...data,
      usage: { ...usage, cost_dzd: 0.0015 },
    });
  });

  it('says the settlement is pending when billing was unreachable, with the exact cost', () => {
    expect(finalChunk({ ...final, data, costMicroDzd: '1500', settlementPending: true })).toEqual({
      ...data,
      usage: { ...usage, cost_dzd: 0.0015, settlement: 'pending' },
    });
  });

  it('relays the chunk unchanged without a cost or without usage', () => {
    expect(finalChunk({ ...final, data })).toEqual(data);
    const bare = { object: 'chat.completion.chunk', choices: [] };
    expect(finalChunk({ ...final, data: bare, costMicroDzd: '1500' })).toEqual(bare);
  });
});
