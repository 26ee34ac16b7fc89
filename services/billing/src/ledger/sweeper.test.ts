import { expect, it } from '@jest/globals';
import { startSweeperWith } from './sweeper.js';

/** Blocks the event loop, as a stopped (SIGSTOP) or starved process would miss its ticks. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

it('tells each sweep how long the process has been awake, starting again after a stall', async () => {
  const awake: number[] = [];
  let stalled = false;
  const stop = startSweeperWith(
    async (_now, awakeForMs) => {
      awake.push(awakeForMs);
      // Stall once, between two ticks, for several intervals.
      if (awake.length === 3 && !stalled) {
        stalled = true;
        setTimeout(() => stall(150), 1);
      }
      return 0;
    },
    () => new Date(),
    { intervalMs: 20 },
  );
  while (awake.length < 6) await new Promise((resolve) => setTimeout(resolve, 10));
  await stop();
  // Awake time grows tick after tick...
  expect(awake[1]!).toBeGreaterThan(awake[0]!);
  expect(awake[2]!).toBeGreaterThan(awake[1]!);
  // ...until the tick after the stall, which starts counting again (below the 150 ms stall).
  expect(awake[3]!).toBeLessThan(awake[2]!);
  expect(awake[3]!).toBeLessThan(150);
  expect(awake[5]!).toBeGreaterThan(awake[3]!);
});
