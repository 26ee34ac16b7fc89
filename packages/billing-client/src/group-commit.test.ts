import { describe, expect, it } from '@jest/globals';
import { GroupCommit, type ItemResult } from './group-commit.js';

/** A billing stand-in: doubles each number, refuses 13 alone, fails a whole call holding 666. */
function doubler() {
  const calls: [string, number][][] = [];
  const commit = new GroupCommit<number, number>({
    maxBatch: 3,
    send: async (batch) => {
      calls.push(batch);
      await new Promise((resolve) => setImmediate(resolve));
      if (batch.some(([, n]) => n === 666)) throw new Error('billing unavailable');
      return new Map(
        batch.map(([key, n]): [string, ItemResult<number>] => [
          key,
          n === 13 ? { ok: false, error: new Error('unlucky') } : { ok: true, value: n * 2 },
        ]),
      );
    },
  });
  return { commit, calls };
}

describe('group commit', () => {
  it('answers each item on its own: one refused item fails only its own caller', async () => {
    const { commit, calls } = doubler();
    const answers = await Promise.allSettled([1, 13, 2].map((n) => commit.submit(`k${n}`, n)));
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : 'refused'))).toEqual([
      2,
      'refused',
      4,
    ]);
    // All three were submitted in one tick: one call.
    expect(calls).toHaveLength(1);
  });

  it('sends what arrives during a call in the next one, bounded by maxBatch', async () => {
    const { commit, calls } = doubler();
    const first = commit.submit('a', 1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4, 5].map((n) => commit.submit(`b${n}`, n));
    await expect(first).resolves.toBe(2);
    await expect(Promise.all(later)).resolves.toEqual([4, 6, 8, 10]);
    expect(calls.map((call) => call.map(([key]) => key))).toEqual([
      ['a'],
      ['b2', 'b3', 'b4'],
      ['b5'],
    ]);
  });

  it('fails every item of a call that failed, and goes on with the next batch', async () => {
    const { commit } = doubler();
    const failed = [666, 7].map((n) => commit.submit(`c${n}`, n));
    await expect(failed[0]).rejects.toThrow('billing unavailable');
    await expect(failed[1]).rejects.toThrow('billing unavailable');
    await expect(commit.submit('d', 8)).resolves.toBe(16);
    await commit.flush();
  });
});
