/**
 * System calls per request of edge, billing and the worker under the closed loop, counted by
 * `strace -c -f` attached to each process for a few seconds: the number of messages each
 * service sends and receives per request, which profiles showed to be most of their CPU (a
 * `writev` on loopback also runs the receiver's TCP path and wakes it). strace slows the
 * processes down; the counts, not the rate, are the figures. Needs strace (Debian: `strace`).
 *
 *   pnpm run build && node infra/bench/syscalls.mjs      # BENCH_SYSCALL_SECONDS=5
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { closedPhase } from './phases/http.mjs';
import { createCleanup, runBench } from './settings.mjs';
import { startBenchStack } from './stack.mjs';

const SERVICES = ['edge', 'billing', 'worker'];
const seconds = Number(process.env.BENCH_SYSCALL_SECONDS ?? 5);
const cleanup = createCleanup();

/** `strace -c` summary rows as {syscall: calls}. */
function parseSummary(text) {
  const calls = {};
  for (const line of text.split('\n')) {
    const cells = line.trim().split(/\s+/);
    if (cells.length >= 5 && /^\d/.test(cells[0]) && cells.at(-1) !== 'total') {
      calls[cells.at(-1)] = Number(cells[3]);
    }
  }
  return calls;
}

async function main() {
  const logDir = path.resolve('.bench', 'logs');
  mkdirSync(logDir, { recursive: true });
  const { baseDir, services, gateway } = await startBenchStack({
    cleanup,
    logDir,
    upstreamStream: { chunks: 5, gapMs: 20 },
    dispatchIntervalMs: 60_000,
    log: (message) => console.log(`[syscalls] ${message}`),
  });
  await closedPhase([gateway], {}, { connections: 10, seconds: 3, warmupSeconds: 0 });
  const tracers = SERVICES.map((name) => {
    const file = path.join(baseDir, `${name}.strace`);
    const child = spawn(
      'strace',
      ['-c', '-f', '-o', file, '-p', String(services[name].child.pid)],
      {
        stdio: 'ignore',
      },
    );
    return { name, file, exited: new Promise((resolve) => child.once('exit', resolve)), child };
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // attached
  const result = await closedPhase([gateway], {}, { connections: 10, seconds, warmupSeconds: 0 });
  for (const tracer of tracers) tracer.child.kill('SIGINT');
  await Promise.all(tracers.map((tracer) => tracer.exited));
  const requests = result.gateway.ok;
  console.log(`${requests} requests; system calls per request (those above 0.1):`);
  for (const { name, file } of tracers) {
    const calls = parseSummary(readFileSync(file, 'utf8'));
    const perRequest = Object.entries(calls)
      .map(([call, count]) => [call, count / requests])
      .filter(([, n]) => n >= 0.1)
      .sort((a, b) => b[1] - a[1])
      .map(([call, n]) => `${call} ${n.toFixed(2)}`);
    console.log(`  ${name.padEnd(8)} ${perRequest.join(', ')}`);
  }
}

await runBench(cleanup, main);
