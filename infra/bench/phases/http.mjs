/**
 * The HTTP phases, run against each system under test in turn (never at the same time): closed
 * loop, open loop and streaming, with the CPU each target's own processes used over the phase.
 */
import { closedLoop, createClient, openLoop, streamProbe, summarize } from '../load.mjs';
import { cpuMeter } from '../proc.mjs';

const chatBody = (stream) => ({
  model: 'bench/chat',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_tokens: 16,
  ...(stream ? { stream: true } : {}),
});

/**
 * Runs `measure(client)` against every target, one after the other, with a CPU meter over the
 * target's processes (and PostgreSQL and RabbitMQ, reported apart). Returns { targetName: figures }.
 */
async function eachTarget(targets, infraPids, { maxSockets, measure }) {
  const results = {};
  for (const target of targets) {
    const client = createClient(target, { maxSockets });
    try {
      const stopMeter = cpuMeter({ ...target.processes, ...infraPids });
      const figures = await measure(client);
      const { cpuMs, backgroundCpuMs } = stopMeter();
      results[target.name] = withCpu(target, figures, { cpuMs, backgroundCpuMs });
    } finally {
      client.close();
    }
  }
  return results;
}

const sum = (values) => values.reduce((total, value) => total + value, 0);

/** A target's load figures with its CPU per answered request (and its counters, if read). */
function withCpu(target, figures, { cpuMs, backgroundCpuMs }, counts) {
  const own = Object.keys(target.processes);
  const requests = figures.ok || 1;
  return {
    ...figures,
    cpuMsPerRequest: Object.fromEntries(
      Object.entries(cpuMs).map(([name, ms]) => [name, ms / requests]),
    ),
    cpuMsPerRequestTotal: sum(own.map((name) => cpuMs[name])) / requests,
    // Of that, outside the processes' main threads: near zero once the JIT has warmed up.
    backgroundCpuMsPerRequest: sum(own.map((name) => backgroundCpuMs[name])) / requests,
    ...(counts ? { counters: counts } : {}),
  };
}

const addInto = (sums, values) => {
  for (const [name, value] of Object.entries(values)) sums[name] = (sums[name] ?? 0) + value;
};

/**
 * Measures the targets in turn, in rounds: each target warmed up first (`warmUp(client)`,
 * unmeasured), then one unmeasured round of slices in turn, then `slice(client, sliceS)` for
 * each target, one after the other, until each has had `seconds`. The host's load, which other
 * tenants change from minute to minute, then falls on every target alike, and the ratio of their
 * figures holds; measured one after the other, Portkey's own figures moved by a fifth between
 * runs. The unmeasured round reopens the connections of the targets warmed up first, which
 * waited through the others' warm-ups longer than the client keeps an idle socket (4 s,
 * load.mjs); from then on a target's sockets outlive the other targets' slices if those take
 * less than that together. A target's latencies, errors and CPU are the sums of its slices;
 * `figures(slices, ok)` adds the phase's own from the slices' results. Its counters (the
 * gateway's) are read around all of its slices: the other targets' slices add only the
 * components' background work to them, and counters read around slices of other targets on
 * the same processes (countedWith) are per request of them all.
 */
async function inTurn(
  targets,
  infraPids,
  { maxSockets, seconds, sliceSeconds, warmUp, slice, figures },
) {
  const clients = targets.map((target) => createClient(target, { maxSockets }));
  try {
    const rounds = Math.max(1, Math.round(seconds / sliceSeconds));
    const sliceS = seconds / rounds;
    // Connections, JIT and caches warm up before anything counts.
    for (const client of clients) await warmUp?.(client);
    for (const client of clients) await slice(client, sliceS);
    const runs = targets.map(() => ({
      latenciesMs: [],
      errors: {},
      slices: [],
      cpuMs: {},
      backgroundCpuMs: {},
    }));
    const stopCounters = await Promise.all(targets.map((target) => target.counters?.start()));
    for (let round = 0; round < rounds; round += 1) {
      for (const [i, target] of targets.entries()) {
        const stopMeter = cpuMeter({ ...target.processes, ...infraPids });
        const { latenciesMs, errors, ...rest } = await slice(clients[i], sliceS);
        const { cpuMs, backgroundCpuMs } = stopMeter();
        const run = runs[i];
        for (const ms of latenciesMs) run.latenciesMs.push(ms);
        addInto(run.errors, errors);
        run.slices.push(rest);
        addInto(run.cpuMs, cpuMs);
        addInto(run.backgroundCpuMs, backgroundCpuMs);
      }
    }
    const results = {};
    const answered = runs.map((run) => run.latenciesMs.length);
    for (const [i, target] of targets.entries()) {
      const run = runs[i];
      const ok = answered[i];
      const counts = await stopCounters[i]?.(
        targets.reduce(
          (total, other, j) => (other.countedWith === target.name ? total + answered[j] : total),
          ok,
        ),
      );
      const phaseFigures = {
        ok,
        errors: run.errors,
        ...figures(run.slices, ok),
        ...summarize(run.latenciesMs),
      };
      results[target.name] = withCpu(target, phaseFigures, run, counts);
    }
    return results;
  } finally {
    for (const client of clients) client.close();
  }
}

/** The closed loop's rate: its answers over the time of its own slices. */
export const closedFigures = (slices, ok) => ({
  reqPerS: ok / sum(slices.map((slice) => slice.elapsedS)),
});

/** The open loop's requests sent in all its slices, and the most in flight in any one. */
export const openFigures = (slices) => ({
  sent: sum(slices.map((slice) => slice.sent)),
  maxInFlight: Math.max(...slices.map((slice) => slice.maxInFlight)),
});

/** The closed loop, in slices taken in turn (direct, Portkey, the gateway, direct, ...). */
export function closedPhase(
  targets,
  infraPids,
  { connections, seconds, warmupSeconds, sliceSeconds = seconds },
) {
  const body = chatBody(false);
  return inTurn(targets, infraPids, {
    maxSockets: connections,
    seconds,
    sliceSeconds,
    warmUp: (client) => closedLoop(client, body, { connections, seconds: warmupSeconds }),
    slice: (client, sliceS) => closedLoop(client, body, { connections, seconds: sliceS }),
    figures: closedFigures,
  });
}

/**
 * The open loop at `ratePerS`, in slices taken in turn as the closed loop's are: a target
 * measured after another then met the same host (measured one after the other, the keyed
 * target's added p50 was +9.0 ms in one run and +17.9 in the next beside the same plain
 * figure). Each slice ends when its last answer is in; the next starts with nothing in flight.
 */
export function openPhase(
  targets,
  infraPids,
  { ratePerS, seconds, warmupSeconds, sliceSeconds = seconds },
) {
  const body = chatBody(false);
  return inTurn(targets, infraPids, {
    maxSockets: Infinity,
    seconds,
    sliceSeconds,
    // At the phase's own rate: the sockets it needs are open and the JIT warm whether or not
    // the closed phase ran before it.
    warmUp:
      warmupSeconds > 0
        ? (client) => openLoop(client, body, { ratePerS, seconds: warmupSeconds })
        : undefined,
    slice: (client, sliceS) => openLoop(client, body, { ratePerS, seconds: sliceS }),
    figures: openFigures,
  });
}

export function streamPhase(targets, infraPids, { count }) {
  return eachTarget(targets, infraPids, {
    maxSockets: 1,
    measure: (client) => streamProbe(client, chatBody(true), { count }),
  });
}
