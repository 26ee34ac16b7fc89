import { expect, it, jest } from '@jest/globals';
import { startSweeperWith } from './sweeper.js';

const intervalMs = 20;

/**
 * The timers are fake and the monotonic clock is the test's own, so a stall is staged exactly:
 * a loaded host (CI runs two jest workers) made real 20 ms timers fire late and reset the count
 * on ticks the test meant to be on time.
 */
it('tells each sweep how long the process has been awake, starting again after a stall', async () => {
  jest.useFakeTimers({
    doNotFake: ['Date', 'performance', 'hrtime', 'nextTick', 'setImmediate', 'queueMicrotask'],
  });
  try {
    let monotonicMs = 0;
    const awake: number[] = [];
    const stop = startSweeperWith(
      async (_now, awakeForMs) => {
        awake.push(awakeForMs);
        return 0;
      },
      () => new Date(),
      { intervalMs, monotonicNowMs: () => monotonicMs },
    );
    // One tick: the clock moves an interval (plus how late the tick fires), then the timer fires.
    const tick = async (lateMs = 0) => {
      monotonicMs += intervalMs + lateMs;
      await jest.advanceTimersByTimeAsync(intervalMs);
    };
    await tick();
    await tick();
    await tick(intervalMs); // late by exactly one interval: still awake
    await tick(150); // stopped or starved for 150 ms: starts counting again
    await tick();
    await tick();
    await stop();
    expect(awake).toEqual([20, 40, 80, 0, 20, 40]);
  } finally {
    jest.useRealTimers();
  }
});
