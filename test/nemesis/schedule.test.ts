import { describe, expect, it } from '@jest/globals';
import { FAULT_GAP_MS, FAULT_KINDS, describeFault, planFaults } from './schedule.js';

const THIRTY_MINUTES_MS = 30 * 60_000;

describe('the nemesis schedule', () => {
  it('is the same for the same seed and duration', () => {
    const first = planFaults(42, 600_000).map(describeFault);
    expect(planFaults(42, 600_000).map(describeFault)).toEqual(first);
  });

  it('replays the start of a longer run in a shorter one', () => {
    const long = planFaults(9, THIRTY_MINUTES_MS).map(describeFault);
    const short = planFaults(9, 300_000).map(describeFault);
    expect(short.length).toBeGreaterThan(0);
    expect(long.slice(0, short.length)).toEqual(short);
  });

  it('differs between seeds', () => {
    const a = planFaults(1, 600_000).map(describeFault);
    const b = planFaults(2, 600_000).map(describeFault);
    expect(a).not.toEqual(b);
  });

  it('has at least 20 faults of every kind in 30 minutes', () => {
    const plan = planFaults(7, THIRTY_MINUTES_MS);
    for (const kind of FAULT_KINDS) {
      expect(plan.filter((fault) => fault.kind === kind).length).toBeGreaterThanOrEqual(20);
    }
  });

  it('has every kind once in a run of one round', () => {
    const plan = planFaults(3, FAULT_KINDS.length * FAULT_GAP_MS);
    expect(new Set(plan.map((fault) => fault.kind))).toEqual(new Set(FAULT_KINDS));
  });

  it('starts every fault inside the run, in order, with a target of its kind', () => {
    const plan = planFaults(11, 300_000);
    expect(plan.length).toBe(300_000 / FAULT_GAP_MS);
    for (const [index, fault] of plan.entries()) {
      expect(fault.atMs).toBeLessThan(300_000);
      if (index > 0) expect(fault.atMs).toBeGreaterThan(plan[index - 1]!.atMs);
      expect(fault.target).not.toBe('');
      expect(fault.durationMs).toBeLessThanOrEqual(30_000);
    }
    const slowed = plan.filter((fault) => fault.kind === 'path-slow');
    expect(slowed.every((fault) => (fault.latencyMs ?? 0) >= 20)).toBe(true);
    const skewed = plan.filter((fault) => fault.kind === 'clock-skew');
    const offsets = skewed.map((fault) => Math.abs(fault.offsetMs ?? 0));
    expect(offsets.every((offset) => offset >= 5_000 && offset <= 120_000)).toBe(true);
  });
});
