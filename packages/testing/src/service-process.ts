import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ServiceProcess {
  readonly port: number;
  readonly baseUrl: string;
  /** Every JSON log line seen so far. */
  readonly logs: Record<string, unknown>[];
  /** Everything the process wrote, stdout and stderr, as text (what an operator's logs hold). */
  output(): string;
  readonly child: ChildProcess;
  /** Sends a signal and resolves with the exit code and how long the exit took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; durationMs: number }>;
}

export interface SpawnServiceOptions {
  /** Path of the built entry point, e.g. services/billing/dist/main.js. */
  entry: string;
  env: NodeJS.ProcessEnv;
  args?: string[];
  /** Options of node itself, before the entry (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
  /**
   * Runs the process under `nice -n <niceness>`: a smaller share of the CPU when it is contended,
   * as a pod with a smaller CPU request gets under Kubernetes (its cgroup's `cpu.weight`). For
   * tests of processes that are separate pods when deployed but share this machine's cores.
   */
  niceness?: number;
}

/**
 * Runs a built service as a real child process on port 0 and waits for its `listening' log
 * line, which carries the bound port.
 */
export async function spawnService(options: SpawnServiceOptions): Promise<ServiceProcess> {
  const argv = [...(options.nodeArgs ?? []), options.entry, ...(options.args ?? [])];
  const niced = options.niceness !== undefined;
  const command = niced ? 'nice' : process.execPath;
  const commandArgs = niced ? ['-n', String(options.niceness), process.execPath, ...argv] : argv;
  const child = spawn(command, commandArgs, {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const written: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    written.push(String(chunk));
    stderr = (stderr + String(chunk)).slice(-8000);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${options.entry} did not report listening in time\n${stderr}`)),
      options.readyTimeoutMs ?? 20_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.entry} exited with ${code} before listening\n${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      written.push(`${line}\n`);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry.msg === 'listening' && typeof entry.port === 'number') {
        clearTimeout(timer);
        resolve(entry.port);
      }
    });
  });
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    logs,
    output: () => written.join(''),
    child,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        const startedAt = Date.now();
        // Already gone: it exited (exitCode) or a signal killed it (signalCode, exitCode null).
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve({ code: child.exitCode, durationMs: 0 });
          return;
        }
        child.once('exit', (code) => resolve({ code, durationMs: Date.now() - startedAt }));
        child.kill(signal);
      }),
  };
}

/** Polls a URL until it answers with the wanted status (readiness can lag the listen). */
export async function waitForStatus(
  url: string,
  status: number,
  timeoutMs = 15_000,
): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.status === status) return response;
      last = `${response.status} ${await response.text()}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}
