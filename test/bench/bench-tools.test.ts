import { describe, expect, it } from '@jest/globals';
import { Worker } from 'node:worker_threads';

/*
 * The two pieces of `pnpm bench` whose mistakes would not show in its output: the open loop's
 * schedule (a late timer must catch up, not shift the schedule) and the /proc readings (a
 * command name with spaces and parentheses must not shift the CPU fields; threads other than the
 * main one count as background).
 */

interface ProcTools {
  parseStat(text: string): { ppid: number; cpuTicks: number };
  parseRssBytes(text: string): number | undefined;
  cpuMeter(groups: Record<string, () => number[]>): () => {
    cpuMs: Record<string, number>;
    backgroundCpuMs: Record<string, number>;
  };
}
interface LoadTools {
  dueRequests(
    startedMs: number,
    nowMs: number,
    sent: number,
    ratePerS: number,
    total: number,
  ): number;
  percentile(sorted: number[], p: number): number;
}

// Plain .mjs modules outside the type-checked program: imported by path at run time.
const benchModule = (name: string) => `${process.cwd()}/infra/bench/${name}`;
const proc = (await import(benchModule('proc.mjs'))) as ProcTools;
const load = (await import(benchModule('load.mjs'))) as LoadTools;

describe('open-loop schedule', () => {
  it('sends the first request at once and then one per period', () => {
    expect(load.dueRequests(0, 0, 0, 100, 1000)).toBe(1);
    expect(load.dueRequests(0, 9.9, 1, 100, 1000)).toBe(0);
    expect(load.dueRequests(0, 10, 1, 100, 1000)).toBe(1);
  });

  it('catches up after a late timer instead of shifting the schedule', () => {
    // The timer fired 55 ms late: requests due at 10, 20, ..., 50 ms all go now.
    expect(load.dueRequests(0, 55, 1, 100, 1000)).toBe(5);
  });

  it('never sends beyond the total', () => {
    expect(load.dueRequests(0, 60_000, 990, 100, 1000)).toBe(10);
    expect(load.dueRequests(0, 60_000, 1000, 100, 1000)).toBe(0);
  });
});

describe('percentiles', () => {
  it('uses the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(load.percentile(sorted, 50)).toBe(50);
    expect(load.percentile(sorted, 99)).toBe(99);
    expect(load.percentile([7], 99)).toBe(7);
    expect(load.percentile([], 50)).toBeNaN();
  });
});

describe('/proc parsing', () => {
  it('reads utime+stime and the parent pid after a command name with spaces and parentheses', () => {
    const stat =
      '4242 (node (edge) x) S 4200 4242 4200 0 -1 4194560 1234 0 0 0 150 25 0 0 20 0 11 0 9 ' +
      '1000 2000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';
    expect(proc.parseStat(stat)).toEqual({ ppid: 4200, cpuTicks: 175 });
  });

  it('reads VmRSS in bytes, and nothing for a zombie', () => {
    expect(proc.parseRssBytes('Name:\tnode\nVmRSS:\t  204800 kB\nThreads: 11\n')).toBe(
      204800 * 1024,
    );
    expect(proc.parseRssBytes('Name:\tnode\nState:\tZ (zombie)\n')).toBeUndefined();
  });

  it('counts CPU outside the main thread apart: a busy worker thread is background', async () => {
    const stop = proc.cpuMeter({ self: () => [process.pid] });
    // The worker spins until the process has used 300 ms more CPU; the main thread only waits.
    const busy = new Worker(
      `const start = process.cpuUsage();
       while (Object.values(process.cpuUsage(start)).reduce((a, b) => a + b) < 300_000) {}`,
      { eval: true },
    );
    await new Promise((resolve) => busy.once('exit', resolve));
    const { cpuMs, backgroundCpuMs } = stop();
    const total = cpuMs.self ?? 0;
    const background = backgroundCpuMs.self ?? 0;
    expect(background).toBeGreaterThan(total / 2);
    expect(total).toBeGreaterThanOrEqual(background);
  });
});
