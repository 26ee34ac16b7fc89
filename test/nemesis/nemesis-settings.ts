import { intFrom } from '../faults/fault-settings.js';

/*
 * A nemesis run's knobs, from the environment (`pnpm test:nemesis --seed N --duration S` sets
 * them: run.mjs).
 */

export const NEMESIS = {
  /** Draws the fault schedule and the operations' kinds. */
  seed: intFrom('NEMESIS_SEED', 1, 0, 2 ** 31 - 1),
  /** How long faults are injected (the workload runs as long). */
  durationMs: intFrom('NEMESIS_DURATION_S', 120, 10, 4 * 3600) * 1_000,
  /** Operations started per second, open loop. */
  ratePerSecond: intFrom('NEMESIS_RATE', 4, 1, 50),
  /** After the faults, how long the system may take to settle before the check. */
  settleWaitMs: intFrom('NEMESIS_SETTLE_WAIT_S', 180, 10, 1_800) * 1_000,
} as const;
