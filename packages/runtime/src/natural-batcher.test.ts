import { describe, expect, it } from '@jest/globals';
import { batchOrEach, NaturalBatcher, type ItemResult } from './natural-batcher.js';

/** A send whose calls are answered when the test says so. */
function controlledSend() {
  const calls: { items: number[]; answer: (results: ItemResult<string>[]) => void }[] = [];
  const fail: { next?: Error } = {};
  const send = (items: number[]) =>
    new Promise<ItemResult<string>[]>((resolve, reject) => {
      if (fail.next) {
        reject(fail.next);
        fail.next = undefined;
        return;
      }
      calls.push({ items, answer: resolve });
    });
  const okAll = (items: number[]): ItemResult<string>[] =>
    items.map((item) => ({ ok: true, value: `v${item}` }));
  return { calls, send, okAll, fail };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('NaturalBatcher', () => {
  it('refuses a call past maxQueued waiting ones with a 503, and runs the others', async () => {
    const { calls, send, okAll } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 8, maxInFlight: 1, maxQueued: 3 });
    const admitted = [1, 2, 3, 4].map((item) => batcher.submit(item));
    // 1 runs, 2 to 4 wait: the queue is full.
    await expect(batcher.submit(5)).rejects.toMatchObject({
      code: 'service_unavailable',
      status: 503,
      details: { retryAfterS: 1 },
    });
    calls[0]?.answer(okAll([1]));
    await tick();
    expect(calls.map((call) => call.items)).toEqual([[1], [2, 3, 4]]);
    // Room again: a new call waits for the next batch instead of being refused.
    const later = batcher.submit(6);
    calls[1]?.answer(okAll([2, 3, 4]));
    await tick();
    calls[2]?.answer(okAll([6]));
    await expect(Promise.all([...admitted, later])).resolves.toEqual([
      'v1',
      'v2',
      'v3',
      'v4',
      'v6',
    ]);
  });

  it('sends a call at once when idle: a batch of one, no waiting', async () => {
    const { calls, send, okAll } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 8, maxInFlight: 1 });
    const answer = batcher.submit(1);
    expect(calls.map((call) => call.items)).toEqual([[1]]);
    calls[0]?.answer(okAll([1]));
    await expect(answer).resolves.toBe('v1');
  });

  it('groups the calls made while the previous batch was in flight into the next one', async () => {
    const { calls, send, okAll } = controlledSend();
    const sizes: number[] = [];
    const batcher = new NaturalBatcher(send, {
      maxBatchSize: 8,
      maxInFlight: 1,
      onBatch: (size) => sizes.push(size),
    });
    const answers = [1, 2, 3, 4].map((item) => batcher.submit(item));
    expect(calls.map((call) => call.items)).toEqual([[1]]);
    calls[0]?.answer(okAll([1]));
    await tick();
    expect(calls.map((call) => call.items)).toEqual([[1], [2, 3, 4]]);
    calls[1]?.answer(okAll([2, 3, 4]));
    await expect(Promise.all(answers)).resolves.toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(sizes).toEqual([1, 3]);
  });

  it('keeps at most maxInFlight batches running and maxBatchSize items in each', async () => {
    const { calls, send, okAll } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 2, maxInFlight: 2 });
    const answers = [1, 2, 3, 4, 5, 6, 7].map((item) => batcher.submit(item));
    expect(calls.map((call) => call.items)).toEqual([[1], [2]]);
    calls[0]?.answer(okAll([1]));
    await tick();
    expect(calls.map((call) => call.items)).toEqual([[1], [2], [3, 4]]);
    calls[1]?.answer(okAll([2]));
    calls[2]?.answer(okAll([3, 4]));
    await tick();
    expect(calls.slice(3).map((call) => call.items)).toEqual([[5, 6], [7]]);
    calls[3]?.answer(okAll([5, 6]));
    calls[4]?.answer(okAll([7]));
    await expect(Promise.all(answers)).resolves.toHaveLength(7);
  });

  it("gives each caller its own item's outcome: one refused item fails no neighbour", async () => {
    const { calls, send } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 8, maxInFlight: 1 });
    const first = batcher.submit(1);
    const [a, b, c] = [2, 3, 4].map((item) => batcher.submit(item));
    calls[0]?.answer([{ ok: true, value: 'v1' }]);
    await first;
    await tick();
    const refused = new Error('refused 3');
    calls[1]?.answer([
      { ok: true, value: 'v2' },
      { ok: false, error: refused },
      { ok: true, value: 'v4' },
    ]);
    await expect(a).resolves.toBe('v2');
    await expect(b).rejects.toBe(refused);
    await expect(c).resolves.toBe('v4');
  });

  it('fails only the items of a batch whose call failed, and goes on with the next', async () => {
    const { calls, send, okAll, fail } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 8, maxInFlight: 1 });
    fail.next = new Error('billing unreachable');
    await expect(batcher.submit(1)).rejects.toThrow('billing unreachable');
    const next = batcher.submit(2);
    calls[0]?.answer(okAll([2]));
    await expect(next).resolves.toBe('v2');
  });

  it('rejects an item the answer has no result for', async () => {
    const { calls, send } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 8, maxInFlight: 1 });
    const answer = batcher.submit(1);
    calls[0]?.answer([]);
    await expect(answer).rejects.toThrow('no result');
  });

  it('flush waits for every queued and running batch', async () => {
    const { calls, send, okAll } = controlledSend();
    const batcher = new NaturalBatcher(send, { maxBatchSize: 8, maxInFlight: 1 });
    const answers = [1, 2].map((item) => batcher.submit(item));
    let flushed = false;
    const flush = batcher.flush().then(() => (flushed = true));
    calls[0]?.answer(okAll([1]));
    await tick();
    expect(flushed).toBe(false);
    calls[1]?.answer(okAll([2]));
    await flush;
    await Promise.all(answers);
    expect(flushed).toBe(true);
    await batcher.flush();
  });
});

describe('batchOrEach', () => {
  const doubled = async (item: number) => {
    if (item < 0) throw new Error(`bad ${item}`);
    return item * 2;
  };

  it('sends a batch as one call, and a batch of one alone', async () => {
    const calls: string[] = [];
    const send = batchOrEach(
      async (items: number[]) => {
        calls.push(`many ${items.join(',')}`);
        return Promise.all(items.map(doubled));
      },
      async (item: number) => {
        calls.push(`one ${item}`);
        return doubled(item);
      },
    );
    await expect(send([1, 2, 3])).resolves.toEqual([
      { ok: true, value: 2 },
      { ok: true, value: 4 },
      { ok: true, value: 6 },
    ]);
    await expect(send([4])).resolves.toEqual([{ ok: true, value: 8 }]);
    expect(calls).toEqual(['many 1,2,3', 'one 4']);
  });

  it('runs a batch that failed item by item: only the bad item fails', async () => {
    const send = batchOrEach(async (items: number[]) => Promise.all(items.map(doubled)), doubled);
    const results = await send([1, -2, 3]);
    expect(results.map((result) => result.ok)).toEqual([true, false, true]);
    expect(results[0]).toEqual({ ok: true, value: 2 });
    expect((results[1] as { error: Error }).error.message).toBe('bad -2');
  });

  it('fails every item at once when the database is unavailable', async () => {
    const singles: number[] = [];
    const unavailable = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const send = batchOrEach(
      async () => {
        throw unavailable;
      },
      async (item: number) => {
        singles.push(item);
        return item;
      },
    );
    await expect(send([1, 2])).resolves.toEqual([
      { ok: false, error: unavailable },
      { ok: false, error: unavailable },
    ]);
    expect(singles).toEqual([]);
  });
});
