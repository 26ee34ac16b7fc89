import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from '@jest/globals';
import { skewableClock } from './skewable-clock.js';
import { waitFor } from './wait.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'clock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Wall-clock minus monotonic time in a child, once per 100 ms, as it prints them. */
function watch(env: Record<string, string>) {
  const script =
    'const base = Date.now() - performance.now();' +
    'setInterval(() => console.log(Math.round(Date.now() - performance.now() - base)), 100);';
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...env } });
  const offsets: number[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => offsets.push(...text.trim().split('\n').map(Number)));
  return { offsets, stop: () => child.kill() };
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('moves a running process`s wall clock and back, its timers untouched', async () => {
  const clock = skewableClock(path.join(dir, 'clock'));
  const child = watch(clock.env);
  try {
    // The child's first tick, however long a loaded machine takes to start it (a fixed 500 ms
    // wait failed once in CI, with no tick yet).
    await waitFor(() => child.offsets.length > 0, 10_000, "the child's first tick");
    expect(Math.abs(child.offsets.at(-1) ?? NaN)).toBeLessThan(50);
    clock.skew(45_000);
    await delay(2_200);
    expect(child.offsets.at(-1)).toBeGreaterThan(44_000);
    clock.skew(-30_000);
    await delay(2_200);
    expect(child.offsets.at(-1)).toBeLessThan(-29_000);
    clock.skew(0);
    await delay(2_200);
    expect(Math.abs(child.offsets.at(-1) ?? NaN)).toBeLessThan(1_000);
    // Ticks kept coming every 100 ms whatever the wall clock did: the timers run on.
    expect(child.offsets.length).toBeGreaterThan(60);
  } finally {
    child.stop();
  }
});
