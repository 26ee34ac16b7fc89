/**
 * The HTTP phases, run against each system under test in turn (never at the same time): closed
 * loop, open loop and streaming, with the CPU each target's own processes used over the phase.
 */
import { closedLoop, createClient, openLoop, streamProbe } from '../load.mjs';
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
      const { cpuMs: cpu, backgroundCpuMs: background } = stopMeter();
      const counts = await stopCounters?.(figures.ok);
      const own = Object.keys(target.processes);
      const requests = figures.ok || 1;
      results[target.name] = {
        ...figures,
        cpuMsPerRequest: Object.fromEntries(
          Object.entries(cpu).map(([name, ms]) => [name, ms / requests]),
        ),
        cpuMsPerRequestTotal: own.reduce((sum, name) => sum + cpu[name], 0) / requests,
        // Of that, outside the processes' main threads: near zero once the JIT has warmed up.
        backgroundCpuMsPerRequest: own.reduce((sum, name) => sum + background[name], 0) / requests,
        ...(counts ? { counters: counts } : {}),
      };
    } finally {
      client.close();
    }
  }
  return results;
}

export function closedPhase(targets, infraPids, { connections, seconds, warmupSeconds }) {
  return eachTarget(targets, infraPids, {
    maxSockets: connections,
    measure: (client) => closedLoop(client, chatBody(false), { connections, seconds }),
    // Connections, JIT and caches warm up before anything counts.
    warmUp: (client) =>
      closedLoop(client, chatBody(false), { connections, seconds: warmupSeconds }),
    counted: true,
  });
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
