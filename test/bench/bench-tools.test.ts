import { describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';

/*
 * The pieces of `pnpm bench` whose mistakes would not show in its output: the open loop's
 * schedule (a late timer must catch up, not shift the schedule), the load client's idle sockets
 * (closed before the server's keep-alive ends, or a request meets a closing socket) and the
 * names of its failures, the /proc readings (a command name with spaces and parentheses must not
 * shift the CPU fields; threads other than the main one count as background) and the closed and
 * open loops' slices (targets measured in turn, each target's figures the sum of its own slices;
 * counters read around the slices of two targets on the same processes divided by both targets'
 * requests).
 */

interface ProcTools {
  parseStat(text: string): { ppid: number; cpuTicks: number };
  parseRssBytes(text: string): number | undefined;
  cpuMeter(groups: Record<string, () => number[]>): () => {
    cpuMs: Record<string, number>;
    backgroundCpuMs: Record<string, number>;
  };
}
interface LoadTools {
  dueRequests(
    startedMs: number,
    nowMs: number,
    sent: number,
    ratePerS: number,
    total: number,
  ): number;
  percentile(sorted: number[], p: number): number;
  createClient(
    target: { url: string; path: string; headers: Record<string, string> },
    options: { maxSockets: number },
  ): {
    send(body: unknown): Promise<{ status: number; error?: string }>;
    close(): void;
  };
}

interface BenchTarget {
  name: string;
  url: string;
  path: string;
  headers: Record<string, string>;
  processes: Record<string, () => number[]>;
  counters?: { start(): Promise<(answered: number) => Promise<{ answered: number }>> };
  countedWith?: string;
}
interface OpenFigures {
  ok: number;
  sent: number;
  maxInFlight: number;
  p50Ms: number;
  errors: Record<string, number>;
  counters?: { answered: number };
}
interface PhaseTools {
  openFigures(slices: { sent: number; maxInFlight: number }[]): {
    sent: number;
    maxInFlight: number;
  };
  closedFigures(slices: { elapsedS: number }[], ok: number): { reqPerS: number };
  openPhase(
    targets: BenchTarget[],
    infraPids: Record<string, () => number[]>,
    settings: { ratePerS: number; seconds: number; warmupSeconds: number; sliceSeconds: number },
  ): Promise<Record<string, OpenFigures>>;
  closedPhase(
    targets: BenchTarget[],
    infraPids: Record<string, () => number[]>,
    settings: { connections: number; seconds: number; warmupSeconds: number; sliceSeconds: number },
  ): Promise<
    Record<
      string,
      {
        ok: number;
        reqPerS: number;
        errors: Record<string, number>;
        counters?: { answered: number };
      }
    >
  >;
}
interface SettingsTools {
  readSettings(env: Record<string, string>, root: string): { targets: string[] };
}

// Plain .mjs modules outside the type-checked program: imported by path at run time.
const benchModule = (name: string) => `${process.cwd()}/infra/bench/${name}`;
const proc = (await import(benchModule('proc.mjs'))) as ProcTools;
const load = (await import(benchModule('load.mjs'))) as LoadTools;
const phases = (await import(benchModule('phases/http.mjs'))) as PhaseTools;
const settings = (await import(benchModule('settings.mjs'))) as SettingsTools;

describe('open-loop schedule', () => {
  it('sends the first request at once and then one per period', () => {
    expect(load.dueRequests(0, 0, 0, 100, 1000)).toBe(1);
    expect(load.dueRequests(0, 9.9, 1, 100, 1000)).toBe(0);
    expect(load.dueRequests(0, 10, 1, 100, 1000)).toBe(1);
  });

  it('catches up after a late timer instead of shifting the schedule', () => {
    // The timer fired 55 ms late: requests due at 10, 20, ..., 50 ms all go now.
    expect(load.dueRequests(0, 55, 1, 100, 1000)).toBe(5);
  });

  it('never sends beyond the total', () => {
    expect(load.dueRequests(0, 60_000, 990, 100, 1000)).toBe(10);
    expect(load.dueRequests(0, 60_000, 1000, 100, 1000)).toBe(0);
  });
});

describe('percentiles', () => {
  it('uses the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(load.percentile(sorted, 50)).toBe(50);
    expect(load.percentile(sorted, 99)).toBe(99);
    expect(load.percentile([7], 99)).toBe(7);
    expect(load.percentile([], 50)).toBeNaN();
  });
});

describe('/proc parsing', () => {
  it('reads utime+stime and the parent pid after a command name with spaces and parentheses', () => {
    const stat =
      '4242 (node (edge) x) S 4200 4242 4200 0 -1 4194560 1234 0 0 0 150 25 0 0 20 0 11 0 9 ' +
      '1000 2000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';
    expect(proc.parseStat(stat)).toEqual({ ppid: 4200, cpuTicks: 175 });
  });

  it('reads VmRSS in bytes, and nothing for a zombie', () => {
    expect(proc.parseRssBytes('Name:\tnode\nVmRSS:\t  204800 kB\nThreads: 11\n')).toBe(
      204800 * 1024,
    );
    expect(proc.parseRssBytes('Name:\tnode\nState:\tZ (zombie)\n')).toBeUndefined();
  });

  it('counts CPU outside the main thread apart: a busy worker thread is background', async () => {
    const stop = proc.cpuMeter({ self: () => [process.pid] });
    // The worker spins until the process has used 300 ms more CPU; the main thread only waits.
    const busy = new Worker(
      `const start = process.cpuUsage();
       while (Object.values(process.cpuUsage(start)).reduce((a, b) => a + b) < 300_000) {}`,
      { eval: true },
    );
    await new Promise((resolve) => busy.once('exit', resolve));
    const { cpuMs, backgroundCpuMs } = stop();
    const total = cpuMs.self ?? 0;
    const background = backgroundCpuMs.self ?? 0;
    expect(background).toBeGreaterThan(total / 2);
    expect(total).toBeGreaterThanOrEqual(background);
  });
});

/** A loopback server answering after `delayMs`, noting when each request came and left. */
async function server(delayMs: number) {
  const arrivalsMs: number[] = [];
  const servedMs: { fromMs: number; toMs: number }[] = [];
  const listener = http.createServer((req, res) => {
    const fromMs = performance.now();
    arrivalsMs.push(fromMs);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        res.end('{}');
        servedMs.push({ fromMs, toMs: performance.now() });
      }, delayMs),
    );
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as AddressInfo;
  const close = () => new Promise<void>((resolve) => listener.close(() => resolve()));
  return { arrivalsMs, servedMs, close, url: `http://127.0.0.1:${port}` };
}

/** True when no request of `mine` arrived while one of `other` was being served. */
const neverDuring = (mine: number[], other: { fromMs: number; toMs: number }[]) =>
  mine.every((at) => other.every(({ fromMs, toMs }) => at < fromMs || at > toMs));

const target = (name: string, url: string, extra: Partial<BenchTarget> = {}): BenchTarget => ({
  name,
  url,
  path: '/',
  headers: {},
  processes: { self: () => [process.pid] },
  ...extra,
});

/** The separate runs of time `mine` falls into, with some of `other` between them. */
function runsOf(mine: number[], other: number[]): number[][] {
  const runs: number[][] = [];
  let last = -Infinity;
  for (const at of mine) {
    if (runs.length === 0 || other.some((t) => t > last && t < at)) runs.push([]);
    runs.at(-1)!.push(at);
    last = at;
  }
  return runs;
}

/** The requests of the measured slices: all runs but the first, the unmeasured round. */
const measured = (runs: number[][]) => runs.slice(1).flat().length;

describe('closed loop in slices', () => {
  it('measures the targets in turn, each for its own slices only', async () => {
    const fast = await server(1);
    const slow = await server(5);
    try {
      const started = performance.now();
      const results = await phases.closedPhase(
        [target('fast', fast.url), target('slow', slow.url)],
        {},
        { connections: 2, seconds: 1.2, warmupSeconds: 0, sliceSeconds: 0.3 },
      );
      const elapsedS = (performance.now() - started) / 1000;
      // An unmeasured round, then four slices each, in turn: fast, slow, fast, slow, ... Each
      // target's requests fall into five separate runs of time, the other's slice between them.
      const fastRuns = runsOf(fast.arrivalsMs, slow.arrivalsMs);
      const slowRuns = runsOf(slow.arrivalsMs, fast.arrivalsMs);
      expect(fastRuns).toHaveLength(5);
      expect(slowRuns).toHaveLength(5);
      const fastFigures = results.fast!;
      const slowFigures = results.slow!;
      expect(fastFigures.errors).toEqual({});
      expect(fastFigures.ok).toBe(measured(fastRuns));
      expect(slowFigures.ok).toBe(measured(slowRuns));
      // The rate is over the target's own slices (1.2 s and what their last answers took),
      // not over the phase's 3 s and more.
      expect(elapsedS).toBeGreaterThan(3);
      expect(fastFigures.reqPerS).toBeLessThanOrEqual(fastFigures.ok / 1.2);
      expect(fastFigures.reqPerS).toBeGreaterThan(fastFigures.ok / 2);
      expect(fastFigures.reqPerS).toBeGreaterThan(slowFigures.reqPerS);
    } finally {
      await fast.close();
      await slow.close();
    }
  });
});

describe('the load client', () => {
  it('closes an idle socket before the server announced it would, not sending on a closing one', async () => {
    let connections = 0;
    const listener = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    // Announced as `Keep-Alive: timeout=2`: the client keeps an idle socket at most 1 s.
    listener.keepAliveTimeout = 2_000;
    listener.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    const client = load.createClient({ url, path: '/', headers: {} }, { maxSockets: 1 });
    try {
      expect((await client.send({})).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // The server would still have taken it; the client had let it go.
      expect((await client.send({})).status).toBe(200);
      expect(connections).toBe(2);
    } finally {
      client.close();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it('names a failure without an answer by its code', async () => {
    const listener = http.createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    const client = load.createClient({ url, path: '/', headers: {} }, { maxSockets: 1 });
    try {
      expect(await client.send({})).toMatchObject({ status: 0, error: 'network ECONNREFUSED' });
    } finally {
      client.close();
    }
  });
});

describe('open loop in slices', () => {
  it('measures the targets in turn, each slice at the full rate and ended before the next', async () => {
    const fast = await server(1);
    const slow = await server(20);
    try {
      const results = await phases.openPhase(
        [target('fast', fast.url), target('slow', slow.url)],
        {},
        { ratePerS: 100, seconds: 1.2, warmupSeconds: 0, sliceSeconds: 0.3 },
      );
      const fastRuns = runsOf(fast.arrivalsMs, slow.arrivalsMs);
      const slowRuns = runsOf(slow.arrivalsMs, fast.arrivalsMs);
      expect(fastRuns).toHaveLength(5);
      expect(slowRuns).toHaveLength(5);
      // A slice's last answer is out before the other target's next slice sends anything.
      expect(neverDuring(fast.arrivalsMs, slow.servedMs)).toBe(true);
      expect(neverDuring(slow.arrivalsMs, fast.servedMs)).toBe(true);
      // 100 a second for 0.3 s, four times measured: every request sent is counted, and answered.
      for (const [name, runs] of [
        ['fast', fastRuns],
        ['slow', slowRuns],
      ] as const) {
        const figures = results[name]!;
        expect(figures.errors).toEqual({});
        expect(figures.sent).toBe(120);
        expect(figures.ok).toBe(120);
        expect(measured(runs)).toBe(120);
      }
      // Latencies are each target's own: the slow server's 20 ms shows in its p50 only.
      expect(results.slow!.p50Ms).toBeGreaterThanOrEqual(20);
      expect(results.fast!.p50Ms).toBeLessThan(20);
    } finally {
      await fast.close();
      await slow.close();
    }
  });

  it("adds up a target's slices: requests sent summed, the most in flight the largest", () => {
    const slices = [
      { sent: 30, maxInFlight: 3 },
      { sent: 30, maxInFlight: 5 },
      { sent: 29, maxInFlight: 2 },
    ];
    expect(phases.openFigures(slices)).toEqual({ sent: 89, maxInFlight: 5 });
    expect(phases.closedFigures([{ elapsedS: 0.5 }, { elapsedS: 1.5 }], 100)).toEqual({
      reqPerS: 50,
    });
  });
});

describe('a second target on the same processes (gateway-keyed)', () => {
  it('is run only when asked for', () => {
    expect(settings.readSettings({}, process.cwd()).targets).toEqual([
      'direct',
      'portkey',
      'gateway',
    ]);
    const asked = { BENCH_TARGETS: 'gateway,gateway-keyed' };
    expect(settings.readSettings(asked, process.cwd()).targets).toEqual([
      'gateway',
      'gateway-keyed',
    ]);
  });

  it.each(['closed', 'open'] as const)(
    'divides the counters read around both targets slices by both targets requests (%s loop)',
    async (loop) => {
      const answering = await server(0);
      const shared = (name: string, extra: Partial<BenchTarget>) =>
        target(name, answering.url, extra);
      // The counters report the requests they are divided by.
      const counters = {
        start: () => Promise.resolve((answered: number) => Promise.resolve({ answered })),
      };
      const targets = [
        shared('plain', { counters }),
        shared('keyed', { countedWith: 'plain' }),
        shared('other', {}),
      ];
      try {
        const results =
          loop === 'closed'
            ? await phases.closedPhase(
                targets,
                {},
                {
                  connections: 1,
                  seconds: 0.4,
                  warmupSeconds: 0,
                  sliceSeconds: 0.2,
                },
              )
            : await phases.openPhase(
                targets,
                {},
                {
                  ratePerS: 50,
                  seconds: 0.4,
                  warmupSeconds: 0,
                  sliceSeconds: 0.2,
                },
              );
        const { plain, keyed, other } = results;
        expect(plain!.ok).toBeGreaterThan(0);
        expect(keyed!.ok).toBeGreaterThan(0);
        expect(other!.ok).toBeGreaterThan(0);
        expect(plain!.counters).toEqual({ answered: plain!.ok + keyed!.ok });
        expect(keyed!.counters).toBeUndefined();
      } finally {
        await answering.close();
      }
    },
  );
});
