import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { findExecutable, run } from './exec.js';
import { freeLoopbackPort } from './ports.js';

export interface RabbitMqNode {
  readonly url: string;
  readonly port: number;
  /** Stops the broker; its state (durable queues, persistent messages) stays on disk. */
  stop(): Promise<void>;
  /** Starts the stopped broker again on the same port with the same state. */
  start(): Promise<void>;
  /** Kills the broker's processes at once (SIGKILL, no shutdown); `start()` brings it back. */
  kill(): Promise<void>;
  /**
   * Whether the broker started last is still running: false once stopped or killed, and once
   * it exited on its own (the host's doing, never a test's), which `start()` also undoes.
   */
  running(): boolean;
  /**
   * Freezes the broker's processes (SIGSTOP) as a stalled VM or host would: connections stay
   * open and nothing answers, until `resume()` (SIGCONT).
   */
  pause(): void;
  resume(): void;
  /** The Erlang node name (`name@localhost`), for `join_cluster`. */
  readonly nodeName: string;
  /** Runs `rabbitmqctl` against this node (e.g. `close_connection`); resolves with its output. */
  ctl(...args: string[]): Promise<string>;
  /** Imports a definitions document (users, permissions...) with one `rabbitmqctl` call. */
  importDefinitions(definitions: object): Promise<void>;
  /** Stops the broker and its private epmd for good. */
  destroy(): Promise<void>;
}

export interface StartRabbitMqOptions {
  baseDir: string;
  /** Fixed AMQP port (the local stack); a free one otherwise. */
  port?: number;
  /** Fixed node name, so a restarted local stack finds its queues again. */
  nodeName?: string;
  /** How long the broker may take to answer AMQP before the start fails (60 s). */
  startTimeoutMs?: number;
  /**
   * Cluster members share one epmd (nodes find each other through it) and one Erlang cookie;
   * a member never stops the shared epmd, its cluster does. Alone, a node has an epmd of its own.
   */
  cluster?: { epmdPort: number; erlangCookie: string };
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

const rabbitBinary = (name: string) => findExecutable(name, ['/usr/lib/rabbitmq/bin']);
const epmdBinary = () => findExecutable('epmd', ['/usr/lib/erlang/bin']);

/**
 * Starts a RabbitMQ node from Debian's package on loopback ports, without its service
 * wrapper (which switches user and writes to /var/log). Each node gets its own epmd port
 * so that stopping it never disturbs another node on the machine.
 */
export async function startRabbitMqNode(options: StartRabbitMqOptions): Promise<RabbitMqNode> {
  mkdirSync(options.baseDir, { recursive: true });
  const port = options.port ?? (await freeLoopbackPort());
  const distPort = await freeLoopbackPort();
  const epmdPort = options.cluster?.epmdPort ?? (await freeLoopbackPort());
  const ownEpmd = options.cluster === undefined;
  if (options.cluster) {
    // rabbitmqctl and the server both read the cookie from $HOME (the base directory).
    writeFileSync(path.join(options.baseDir, '.erlang.cookie'), options.cluster.erlangCookie, {
      mode: 0o400,
    });
  }
  const nodeName = options.nodeName ?? `gwtest${randomBytes(4).toString('hex')}@localhost`;
  const configBase = path.join(options.baseDir, 'rabbitmq');
  writeFileSync(
    `${configBase}.conf`,
    [
      'loopback_users = none',
      'disk_free_limit.absolute = 50MB',
      'log.console = false',
      'log.file.level = warning',
      // Quorum queues keep their log in memory until this much; small for tests.
      'raft.wal_max_size_bytes = 8388608',
    ].join('\n') + '\n',
  );
  const pluginsFile = path.join(options.baseDir, 'enabled_plugins');
  writeFileSync(pluginsFile, '[].\n');
  const erlArgs = '-kernel inet_dist_use_interface {127,0,0,1}';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: options.baseDir,
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(options.baseDir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(options.baseDir, 'log'),
    RABBITMQ_CONFIG_FILE: `${configBase}.conf`,
    RABBITMQ_ENABLED_PLUGINS_FILE: pluginsFile,
    RABBITMQ_PID_FILE: path.join(options.baseDir, 'rabbitmq.pid'),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    ERL_EPMD_PORT: String(epmdPort),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: erlArgs,
    RABBITMQ_CTL_ERL_ARGS: erlArgs,
  };
  const outputFile = path.join(options.baseDir, 'server.out');
  let child: ChildProcess | undefined;

  const start = async () => {
    const out = openSync(outputFile, 'a');
    child = spawn(rabbitBinary('rabbitmq-server'), [], { env, stdio: ['ignore', out, out] });
    closeSync(out);
    const exited = new Promise<never>((_, reject) =>
      child!.once('exit', (code) => reject(new Error(`rabbitmq-server exited with ${code}`))),
    );
    try {
      await Promise.race([waitForAmqp(port, options.startTimeoutMs ?? START_TIMEOUT_MS), exited]);
    } catch (error) {
      await killAll();
      throw new Error(`RabbitMQ did not start: ${(error as Error).message}\n${tail(outputFile)}`);
    }
  };

  /**
   * A failed start kills the wrapper script, the Erlang VM it runs and the node's epmd at once
   * (seen here: a boot that never opened AMQP left them running, and the caller's process
   * waiting on them for good).
   */
  const killAll = async () => {
    await kill();
    if (ownEpmd) await stopEpmd(epmdPort);
  };

  /** SIGKILL to the wrapper and the Erlang VM below it, sparing epmd (it may be shared). */
  const kill = async () => {
    const running = child;
    child = undefined;
    if (running?.pid === undefined || running.exitCode !== null) return;
    const gone = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    signalNode(running.pid, 'SIGKILL');
    await gone;
  };

  /** The signal to the wrapper and the Erlang VM below it (not epmd, which may be shared). */
  const signalRunning = (signal: NodeJS.Signals) => {
    if (child?.pid !== undefined && child.exitCode === null) signalNode(child.pid, signal);
  };

  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    // A paused node would not act on SIGTERM until continued.
    if (running.pid !== undefined) signalNode(running.pid, 'SIGCONT');
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    child = undefined;
  };

  await start();
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    port,
    nodeName,
    start,
    stop,
    kill,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    pause: () => signalRunning('SIGSTOP'),
    resume: () => signalRunning('SIGCONT'),
    ctl: (...args) => run(rabbitBinary('rabbitmqctl'), args, { env }),
    importDefinitions: async (definitions) => {
      const file = path.join(options.baseDir, `definitions-${randomBytes(4).toString('hex')}.json`);
      writeFileSync(file, JSON.stringify(definitions), { mode: 0o600 });
      try {
        await run(rabbitBinary('rabbitmqctl'), ['import_definitions', file], { env });
      } finally {
        rmSync(file, { force: true });
      }
    },
    destroy: async () => {
      await stop();
      if (ownEpmd) await stopEpmd(epmdPort);
    },
  };
}

/** Stops the epmd at `port` (a cluster's, once its nodes are stopped). */
export async function stopEpmd(port: number): Promise<void> {
  await run(epmdBinary(), ['-port', String(port), '-kill'], {
    env: { ...process.env, ERL_EPMD_PORT: String(port), ERL_EPMD_ADDRESS: '127.0.0.1' },
  }).catch(() => undefined);
}

/** Every process below `pid`, children first found (Linux /proc; no external tool). */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid ...`: comm may hold spaces, so read after its last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Exited while we looked.
    }
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** epmd is started by the first Erlang VM that needs it, as that VM's child. */
function isEpmd(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'epmd';
  } catch {
    return false;
  }
}

/** Sends `signal` to `pid` and every process below it except epmd, children first. */
function signalNode(pid: number, signal: NodeJS.Signals): void {
  for (const target of [...descendantsOf(pid), pid]) {
    if (isEpmd(target)) continue;
    try {
      process.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

/**
 * The broker opens its AMQP listener late in boot, but a TCP accept alone can race the
 * boot's end: wait for the server's Connection.Start frame in answer to the protocol header.
 */
async function waitForAmqp(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answersAmqp(port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no AMQP answer on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

function answersAmqp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(Buffer.from([65, 77, 81, 80, 0, 0, 9, 1])));
    // Frame type 1 (method) on channel 0 is Connection.Start.
    socket.once('data', (data) => done(data[0] === 1));
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-4000);
  } catch {
    return '(no output)';
  }
}
