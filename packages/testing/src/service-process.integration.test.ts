import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnService } from './service-process.js';

const dir = mkdtempSync(path.join(tmpdir(), 'service-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in "service": reports listening the way the services do, then idles. */
const entry = path.join(dir, 'idle.mjs');
writeFileSync(
  entry,
  "console.log(JSON.stringify({ msg: 'listening', port: 1 }));\nsetInterval(() => {}, 1000);\n",
);

describe('ServiceProcess.stop', () => {
  it('answers at once for a process a signal already killed (a test killed it)', async () => {
    const service = await spawnService({ entry, env: {} });
    service.child.kill('SIGKILL');
    await once(service.child, 'exit');
    const stopped = await Promise.race([
      service.stop('SIGTERM'),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 2_000)),
    ]);
    expect(stopped).toEqual({ code: null, durationMs: 0 });
  });

  it('stops a running process with the signal and reports its exit', async () => {
    const service = await spawnService({ entry, env: {} });
    const stopped = await service.stop('SIGTERM');
    expect(stopped.code).toBeNull();
    expect(service.child.signalCode).toBe('SIGTERM');
  });
});
