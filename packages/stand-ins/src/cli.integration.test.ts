import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { describe, expect, it } from '@jest/globals';

/* Runs the built CLI (dist/cli.js; `pnpm test:jest` builds first) as a real process. */

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

function run(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, PORT: undefined, HOST: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`exited with ${code} before listening`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === 'listening') resolve(entry);
    });
  });
  listening.catch(() => undefined);
  return { child, exited, listening };
}

describe('gateway-stand-in CLI', () => {
  it('runs a model node on a free loopback port and exits 0 on SIGTERM', async () => {
    const { child, exited, listening } = run(['node', '--first-token-latency-ms', '0']);
    const line = await listening;
    expect(line).toMatchObject({ level: 30, msg: 'listening', service: 'stand-in-node' });
    const port = line.port as number;
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('runs a provider with its key and models', async () => {
    const { child, exited, listening } = run(['provider', '--api-key', 'k', '--models', 'a,b']);
    const { port } = (await listening) as { port: number };
    const models = await fetch(`http://127.0.0.1:${port}/v1/models`, {
      headers: { authorization: 'Bearer k' },
    });
    expect(await models.json()).toMatchObject({ data: [{ id: 'a' }, { id: 'b' }] });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('refuses a missing key, a non-loopback host and unknown commands', async () => {
    expect(await run(['provider', '--models', 'a']).exited).toBe(2);
    expect(await run(['node', '--host', '0.0.0.0']).exited).toBe(1);
    expect(await run(['nonsense']).exited).toBe(2);
  });
});
