import { expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRabbitMqNode } from './rabbitmq.js';

/** Command lines naming `dir` (the broker's VM runs with it as its home). */
function processesOf(dir: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')];
      } catch {
        return [];
      }
    })
    .filter((command) => command.includes(dir));
}

it('kills everything it started when the broker does not answer in time', async () => {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-fail-'));
  try {
    // No broker boots in 1 ms: the start fails as a hung boot would, only sooner.
    await expect(startRabbitMqNode({ baseDir, startTimeoutMs: 1 })).rejects.toThrow(
      /RabbitMQ did not start/,
    );
    // Long enough for a surviving wrapper to have started the Erlang VM (named by its home).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(processesOf(baseDir)).toEqual([]);
  } finally {
    rmSync(baseDir, { recursive: true, force: true });
  }
}, 30_000);

it('says a broker that exited on its own is not running, and start() brings it back', async () => {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-exit-'));
  const node = await startRabbitMqNode({ baseDir });
  try {
    expect(node.running()).toBe(true);
    // The node stops at its own command, as a broker that dies under the suite would.
    await node.ctl('stop');
    const deadline = Date.now() + 30_000;
    while (node.running() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(node.running()).toBe(false);
    await node.start();
    expect(node.running()).toBe(true);
    await node.stop();
    expect(node.running()).toBe(false);
  } finally {
    await node.destroy();
    rmSync(baseDir, { recursive: true, force: true });
  }
}, 120_000);
