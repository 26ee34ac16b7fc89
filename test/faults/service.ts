import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import {
  gatewayServiceEntry,
  spawnService,
  waitForStatus,
  type GatewayService,
  type ServiceProcess,
  type SkewableClock,
} from '@gateway/testing';

/*
 * One service as a process that a fault may kill, pause and start again on its port. With
 * `supervised`, a process that exits by itself (not through `kill` or `stop`) is started again,
 * as Kubernetes restarts a crashed container (with a growing back-off); each such exit is kept
 * in `crashes` for the report. Everything it writes goes to its log file as it is written, so a
 * crash is readable even if the run that saw it dies.
 */

export type ServiceName = GatewayService;

const READY_TIMEOUT_MS = 60_000;
/** Restart back-off after a crash: doubles from the first to the last. */
const RESTART_BACKOFF_MS = { first: 1_000, last: 16_000 };

export interface Crash {
  atMs: number;
  code: number | null;
  signal: string | null;
}

export interface ServiceOptions {
  /** Names a replica (`edge-2`) in logs and reports. */
  label?: string;
  /** The wall clock its processes read, when the stack was asked for movable clocks. */
  clock?: SkewableClock;
  /** Where its log file (`<label>.log`) goes; appended to across restarts. */
  logDir?: string;
  supervised?: boolean;
}

export class Service {
  readonly label: string;
  readonly clock: SkewableClock | undefined;
  readonly crashes: Crash[] = [];
  private process: ServiceProcess | undefined;
  private paused = false;
  /** Set by `kill` and `stop`: the exit that follows is wanted, not a crash. */
  private exitWanted = false;
  private starting: Promise<void> | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private restartBackoffMs = RESTART_BACKOFF_MS.first;
  /** Output of the processes this service ran before the current one (kept across kills). */
  private readonly log: WriteStream | undefined;

  constructor(
    readonly name: ServiceName,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
    private readonly options: ServiceOptions = {},
  ) {
    this.label = options.label ?? name;
    this.clock = options.clock;
    if (options.logDir !== undefined) {
      mkdirSync(options.logDir, { recursive: true });
      this.log = createWriteStream(path.join(options.logDir, `${this.label}.log`), { flags: 'w' });
    }
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts a process (if none runs) and waits until it answers ready; one start at a time. */
  start(): Promise<void> {
    this.starting ??= this.startOnce().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startOnce(): Promise<void> {
    clearTimeout(this.restartTimer);
    if (!this.running()) {
      this.exitWanted = false;
      const entry = gatewayServiceEntry(this.name);
      const env = { ...this.env, ...this.clock?.env, PORT: String(this.port) };
      const started = await spawnService({ entry, env });
      this.process = started;
      started.child.stdout?.on('data', (chunk: Buffer) => this.log?.write(chunk));
      started.child.stderr?.on('data', (chunk: Buffer) => this.log?.write(chunk));
      started.child.once('exit', (code, signal) => this.exited(started, code, signal));
    }
    await waitForStatus(`${this.baseUrl}/readyz`, 200, READY_TIMEOUT_MS);
    this.restartBackoffMs = RESTART_BACKOFF_MS.first;
  }

  private exited(which: ServiceProcess, code: number | null, signal: string | null): void {
    if (this.exitWanted || which !== this.process) return;
    this.crashes.push({ atMs: Date.now(), code, signal });
    this.log?.write(`\n[supervisor] ${this.label} exited by itself: ${code ?? signal}\n`);
    if (this.options.supervised) this.restartLater();
  }

  private restartLater(): void {
    const waitMs = this.restartBackoffMs;
    this.restartBackoffMs = Math.min(waitMs * 2, RESTART_BACKOFF_MS.last);
    this.restartTimer = setTimeout(() => {
      this.start().catch(() => {
        if (!this.exitWanted && !this.running()) this.restartLater();
      });
    }, waitMs);
  }

  get pid(): number {
    const pid = this.process?.child.pid;
    if (pid === undefined) throw new Error(`${this.label} is not running`);
    return pid;
  }

  /** kill -9: no shutdown, no flush; the process is gone when this resolves. */
  async kill(): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.exitWanted = true;
    clearTimeout(this.restartTimer);
    this.resume();
    if (this.running()) await this.process?.stop('SIGKILL');
  }

  pause(): void {
    this.process?.child.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    if (this.paused) this.process?.child.kill('SIGCONT');
    this.paused = false;
  }

  running(): boolean {
    const child = this.process?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.exitWanted = true;
    clearTimeout(this.restartTimer);
    this.resume();
    if (this.running()) await this.process?.stop('SIGTERM');
    await new Promise<void>((resolve) => (this.log ? this.log.end(resolve) : resolve()));
  }
}
