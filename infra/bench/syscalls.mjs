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
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestCertificates } from '../../packages/testing/dist/index.js';
import { closedPhase } from './phases/http.mjs';
import { createCleanup } from './settings.mjs';
import { provision, startInfrastructure, startServices, startUpstream } from './stack.mjs';

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
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-syscalls-'));
  chmodSync(baseDir, 0o755);
  cleanup.push(() => rmSync(baseDir, { recursive: true, force: true }));
  const logDir = path.join(baseDir, 'logs');
  mkdirSync(logDir);
  const certs = createTestCertificates();
  cleanup.push(() => certs.remove());
  const run = { cleanup, logDir };
  const [infra, upstream] = await Promise.all([
    startInfrastructure(baseDir, run),
    startUpstream({ chunks: 5, gapMs: 20 }, run),
  ]);
  const services = await startServices(
    infra,
    { dispatchIntervalMs: 60_000, caFile: certs.caFile },
    run,
  );
  const { apiKey } = await provision(services, upstream.baseUrl);
  const gateway = {
    name: 'gateway',
    url: services.edge.baseUrl,
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${apiKey}` },
    processes: {},
  };
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

cleanup.onSignals();
try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup.run();
}
