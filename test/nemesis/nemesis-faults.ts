import type { TcpBalancer } from '@gateway/testing';
import { FAULTS } from '../faults/fault-settings.js';
import type { FaultStack } from '../faults/fault-stack.js';
import { BROKER_NODES, describeFault, type PlannedFault } from './schedule.js';

/*
 * Carries out a schedule (schedule.ts) against the nemesis's stack. Faults start at their planned
 * offsets and overlap, except that faults on one thing wait for each other (a lock per process,
 * per path, one for the broker cluster, one for PostgreSQL, the model node and the receiver):
 * a process is not killed while it is paused, and at most one broker node is down at a time, so
 * the quorum queues keep their majority (losing two of three nodes is an outage, not a fault the
 * gateway can be asked to hide). Every fault undoes itself when its time is up.
 */

/** How the webhook receiver answers now (receiver-slow, receiver-wedge). */
export type ReceiverMood = 'normal' | 'slow' | 'wedged';

export interface FaultRecord {
  fault: PlannedFault;
  /** From the run's start: when it began to act (after waiting for its lock) and ended. */
  startedMs?: number;
  endedMs?: number;
  error?: string;
}

export interface NemesisTargets {
  stack: FaultStack;
  setReceiverMood(mood: ReceiverMood): void;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function lockOf(fault: PlannedFault): string {
  if (fault.kind.startsWith('broker-node')) return 'broker';
  if (fault.kind.startsWith('path-')) return `path:${fault.target}`;
  // A process's clock may be off while it is killed or paused: the two are independent.
  if (fault.kind === 'clock-skew') return `clock:${fault.target}`;
  return fault.target;
}

function pathOf(stack: FaultStack, name: string): TcpBalancer {
  const balancers: Record<string, TcpBalancer | undefined> = {
    postgres: stack.postgresStandby?.balancer,
    rabbitmq: stack.brokerCluster?.balancer,
    billing: stack.paths?.billing,
    model: stack.paths?.model,
    ledger: stack.paths?.ledger,
    admission: stack.paths?.admission,
    jobs: stack.paths?.jobs,
  };
  const balancer = balancers[name];
  if (balancer === undefined) throw new Error(`no proxy on the ${name} path`);
  return balancer;
}

function processOf(stack: FaultStack, label: string) {
  const replica = stack.replicas.find((candidate) => candidate.label === label);
  if (replica === undefined) throw new Error(`no process ${label}`);
  return replica;
}

function brokerNodeOf(stack: FaultStack, name: string) {
  const node = stack.brokerCluster?.nodes[BROKER_NODES.indexOf(name as never)];
  if (node === undefined) throw new Error(`no broker node ${name}`);
  return node;
}

function postgresOf(stack: FaultStack) {
  const pair = stack.postgresStandby;
  if (pair === undefined) throw new Error('no PostgreSQL standby: the nemesis needs the ha shape');
  return pair;
}

/** Does the fault, waits its duration, and undoes it (also when it fails half-way). */
async function apply(targets: NemesisTargets, fault: PlannedFault): Promise<void> {
  const { stack } = targets;
  const ms = fault.durationMs;
  switch (fault.kind) {
    case 'process-kill': {
      const replica = processOf(stack, fault.target);
      await replica.kill();
      await delay(ms);
      return replica.start();
    }
    case 'process-pause': {
      const replica = processOf(stack, fault.target);
      if (!replica.running()) return;
      replica.pause();
      return delay(ms).finally(() => replica.resume());
    }
    case 'broker-node-kill': {
      const node = brokerNodeOf(stack, fault.target);
      await node.kill();
      await delay(ms);
      return node.start();
    }
    case 'broker-node-pause': {
      const node = brokerNodeOf(stack, fault.target);
      node.pause();
      return delay(ms).finally(() => node.resume());
    }
    case 'broker-node-restart': {
      const node = brokerNodeOf(stack, fault.target);
      await node.stop();
      await delay(ms);
      return node.start();
    }
    case 'postgres-restart':
      return postgresOf(stack).restart();
    case 'postgres-failover': {
      // The old primary comes back as the new standby, so the next failover has one.
      const pair = postgresOf(stack);
      await pair.failover();
      return pair.rejoin();
    }
    case 'path-stall':
      pathOf(stack, fault.target).stall(ms);
      return delay(ms);
    case 'path-slow': {
      const path = pathOf(stack, fault.target);
      path.setLatencyMs(fault.latencyMs ?? 0);
      return delay(ms).finally(() => path.setLatencyMs(0));
    }
    case 'path-reset':
      return pathOf(stack, fault.target).cut();
    case 'model-slow':
      stack.node.setOptions({ tokensPerSecond: 4 });
      return delay(ms).finally(() => stack.node.setOptions({ ...FAULTS.node }));
    case 'model-wedge':
      // Calls accepted and never answered: the worker's first-byte timeout ends them.
      stack.node.setFault({ kind: 'timeout', count: 1_000 });
      return delay(ms).finally(() => stack.node.clearFault());
    case 'clock-skew': {
      const clock = processOf(stack, fault.target).clock;
      if (clock === undefined) throw new Error('the stack runs without movable clocks');
      clock.skew(fault.offsetMs ?? 0);
      return delay(ms).finally(() => clock.skew(0));
    }
    case 'receiver-slow':
    case 'receiver-wedge':
      targets.setReceiverMood(fault.kind === 'receiver-slow' ? 'slow' : 'wedged');
      return delay(ms).finally(() => targets.setReceiverMood('normal'));
  }
}

export interface NemesisRun {
  /** Resolves when every fault has ended (undone), with what happened to each. */
  done: Promise<FaultRecord[]>;
  /** No fault starts after this; the ones running finish their time. */
  stop(): void;
}

/** Starts the schedule now (`t0Ms`: the run's start, `Date.now()` based). */
export function startNemesis(
  targets: NemesisTargets,
  plan: readonly PlannedFault[],
  t0Ms: number,
  log: (line: string) => void,
): NemesisRun {
  let stopped = false;
  const locks = new Map<string, Promise<void>>();
  const now = () => Date.now() - t0Ms;
  const launch = (fault: PlannedFault): Promise<FaultRecord> => {
    const record: FaultRecord = { fault };
    const lock = lockOf(fault);
    const turn = (locks.get(lock) ?? Promise.resolve()).then(async () => {
      if (stopped) return;
      record.startedMs = now();
      log(`fault ${describeFault(fault)} starts at ${(record.startedMs / 1000).toFixed(1)}s`);
      try {
        await apply(targets, fault);
      } catch (error) {
        record.error = error instanceof Error ? error.message : String(error);
        log(`fault #${fault.index} failed: ${record.error}`);
      } finally {
        record.endedMs = now();
      }
    });
    locks.set(lock, turn);
    return turn.then(() => record);
  };
  const done = (async () => {
    const running: Promise<FaultRecord>[] = [];
    for (const fault of plan) {
      const wait = fault.atMs - now();
      if (wait > 0) await delay(wait);
      if (stopped) break;
      running.push(launch(fault));
    }
    return Promise.all(running);
  })();
  return {
    done,
    stop: () => {
      stopped = true;
    },
  };
}
