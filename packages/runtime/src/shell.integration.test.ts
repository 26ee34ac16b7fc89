import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

// The built package: a service's own process, as main.ts starts it.
const runtime = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** Starts a process with a service shell that logs `lines` lines (`fields` each), then runs `then`. */
function serviceProcess(lines: number, then: string, fields = '{ i }') {
  const script = `
    const { createServiceShell } = await import(${JSON.stringify(runtime)});
    const shell = createServiceShell('probe', { LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: 2000 });
    for (let i = 0; i < ${lines}; i += 1) shell.logger.info(${fields}, 'line');
    process.stderr.write('logged\\n');
    ${then}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // Unbuffered: when the lines were handed to the logger (process start-up is not timed).
  const handedOver = new Promise<void>((resolve) => child.stderr.once('data', () => resolve()));
  const outputLines = () => output.split('\n').filter((line) => line.startsWith('{'));
  const logged = () => outputLines().filter((line) => line.includes('"msg":"line"')).length;
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, outputLines, logged, exited, handedOver };
}

describe('service log output (buffered)', () => {
  it('writes a lone line within the flush interval, without waiting for more', async () => {
    const probe = serviceProcess(1, 'setTimeout(() => {}, 10000);');
    await probe.handedOver;
    // 200 ms flush interval; 1 s leaves room for a loaded machine.
    const deadline = Date.now() + 1000;
    while (probe.logged() < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(probe.logged()).toBe(1);
    probe.child.kill('SIGKILL');
    await probe.exited;
  });

  it('writes every buffered line when the service shuts down', async () => {
    // Shut down right after logging: nothing may stay in the buffer.
    const probe = serviceProcess(5000, "process.kill(process.pid, 'SIGTERM');");
    expect(await probe.exited).toBe(0);
    expect(probe.logged()).toBe(5000);
  });

  it('drops and counts what a stalled output cannot take, instead of buffering it all', async () => {
    // ~24 MB of lines while the test does not read the pipe: three times the bound. The child
    // then stays up long enough to flush its warning once the test reads again.
    const padding = 'x'.repeat(100);
    const probe = serviceProcess(
      200_000,
      `setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1500);`,
      `{ i, padding: ${JSON.stringify(padding)} }`,
    );
    probe.child.stdout.pause();
    await probe.handedOver;
    probe.child.stdout.resume();
    expect(await probe.exited).toBe(0);
    const logged = probe.logged();
    expect(logged).toBeGreaterThan(0);
    expect(logged).toBeLessThan(200_000);
    const warning = probe
      .outputLines()
      .map((line) => JSON.parse(line) as { msg?: string; droppedLines?: number })
      .find((line) => line.msg === 'log output stalled: lines dropped');
    // Every line is either written or counted as dropped.
    expect(warning?.droppedLines).toBe(200_000 - logged);
  }, 30_000);
});
