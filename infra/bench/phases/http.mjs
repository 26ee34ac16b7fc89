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
 * Runs `warmUp(client)` (unmeasured) then `measure(client)` against every target, with a CPU
 * meter over the target's processes (and PostgreSQL and RabbitMQ, reported apart) during
 * `measure` only. With `counted`, a target with `counters` (the gateway) also has its
 * components' counters read around `measure` (adds about 25 s: see counters/gateway.mjs).
 * Returns { targetName: figures }.
 */
async function eachTarget(targets, infraPids, { maxSockets, measure, warmUp, counted = false }) {
  const results = {};
  for (const target of targets) {
    const client = createClient(target, { maxSockets });
    try {
      await warmUp?.(client);
      const stopCounters = counted ? await target.counters?.start() : undefined;
      const stopMeter = cpuMeter({ ...target.processes, ...infraPids });
      const figures = await measure(client);
      const { cpuMs, backgroundCpuMs } = stopMeter();
      const counts = await stopCounters?.(figures.ok);
      results[target.name] = withCpu(target, figures, { cpuMs, backgroundCpuMs }, counts);
    } finally {
      client.close();
    }
  }
  return results;
}

/** A target's load figures with its CPU per answered request (and its counters, if read). */
function withCpu(target, figures, { cpuMs, backgroundCpuMs }, counts) {
  const own = Object.keys(target.processes);
  const requests = figures.ok || 1;
  return {
    ...figures,
    cpuMsPerRequest: Object.fromEntries(
      Object.entries(cpuMs).map(([name, ms]) => [name, ms / requests]),
    ),
    cpuMsPerRequestTotal: own.reduce((sum, name) => sum + cpuMs[name], 0) / requests,
    // Of that, outside the processes' main threads: near zero once the JIT has warmed up.
    backgroundCpuMsPerRequest: own.reduce((sum, name) => sum + backgroundCpuMs[name], 0) / requests,
    ...(counts ? { counters: counts } : {}),
  };
}

const addInto = (sums, values) => {
  for (const [name, value] of Object.entries(values)) sums[name] = (sums[name] ?? 0) + value;
};

/**
 * The closed loop: each target warmed up in turn, then measured in slices of `sliceSeconds`
 * taken in turn (direct, Portkey, the gateway, direct, ...) until each has had `seconds`. The
 * host's load, which other tenants change from minute to minute, then falls on every target
 * alike, and the ratio of their figures holds; measured one after the other, Portkey's own
 * figures moved by a fifth between runs. A target's figures are the sum of its slices. Its
 * counters (the gateway's) are read around all of its slices: the other targets' slices add
 * only the components' background work to them. Slices of 2 s keep each target's connections
 * idle less than its server's keep-alive (5 s) while the other two run.
 */
export async function closedPhase(
  targets,
  infraPids,
  { connections, seconds, warmupSeconds, sliceSeconds = seconds },
) {
  const body = chatBody(false);
  const clients = targets.map((target) => createClient(target, { maxSockets: connections }));
  try {
    // Connections, JIT and caches warm up before anything counts.
    for (const client of clients)
      await closedLoop(client, body, { connections, seconds: warmupSeconds });
    const runs = targets.map(() => ({
      latenciesMs: [],
      errors: {},
      elapsedS: 0,
      cpuMs: {},
      backgroundCpuMs: {},
    }));
    const stopCounters = await Promise.all(targets.map((target) => target.counters?.start()));
    const rounds = Math.max(1, Math.round(seconds / sliceSeconds));
    for (let round = 0; round < rounds; round += 1) {
      for (const [i, target] of targets.entries()) {
        const stopMeter = cpuMeter({ ...target.processes, ...infraPids });
        const slice = await closedLoop(clients[i], body, {
          connections,
          seconds: seconds / rounds,
        });
        const { cpuMs, backgroundCpuMs } = stopMeter();
        const run = runs[i];
        for (const ms of slice.latenciesMs) run.latenciesMs.push(ms);
        addInto(run.errors, slice.errors);
        run.elapsedS += slice.elapsedS;
        addInto(run.cpuMs, cpuMs);
        addInto(run.backgroundCpuMs, backgroundCpuMs);
      }
    }
    const results = {};
    const answered = runs.map((run) => run.latenciesMs.length);
    for (const [i, target] of targets.entries()) {
      const run = runs[i];
      const ok = answered[i];
      // Counters read around slices of other targets on the same processes (countedWith) are
      // per request of them all.
      const counts = await stopCounters[i]?.(
        targets.reduce(
          (sum, other, j) => (other.countedWith === target.name ? sum + answered[j] : sum),
          ok,
        ),
      );
      const figures = {
        ok,
        errors: run.errors,
        reqPerS: ok / run.elapsedS,
        ...summarize(run.latenciesMs),
      };
      results[target.name] = withCpu(target, figures, run, counts);
    }
    return results;
  } finally {
    for (const client of clients) client.close();
  }
}

export function openPhase(targets, infraPids, { ratePerS, seconds, warmupSeconds }) {
  return eachTarget(targets, infraPids, {
    maxSockets: Infinity,
    measure: (client) => openLoop(client, chatBody(false), { ratePerS, seconds }),
    // At the phase's own rate: the sockets it needs are open and the JIT warm whether or not
    // the closed phase ran before it.
    warmUp:
      warmupSeconds > 0
        ? (client) => openLoop(client, chatBody(false), { ratePerS, seconds: warmupSeconds })
        : undefined,
    counted: true,
  });
}

export function streamPhase(targets, infraPids, { count }) {
  return eachTarget(targets, infraPids, {
    maxSockets: 1,
    measure: (client) => streamProbe(client, chatBody(true), { count }),
  });
}
