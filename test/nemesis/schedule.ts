import fc from 'fast-check';

/*
 * The nemesis's fault schedule: drawn from a seed with fast-check's seeded sampling, so the same
 * seed and duration give the same faults, in the same order, at the same offsets (the system's
 * answers to them still vary: a run is replayable in its faults, not in its timing).
 *
 * Kinds come in rounds: each round is every kind once, in an order drawn from the seed, so a run
 * of N rounds has N faults of every kind, whatever the seed. One fault starts every
 * `FAULT_GAP_MS` on average; faults of different targets overlap (the executor serialises the
 * ones that hit the same thing: nemesis-faults.ts).
 */

export const FAULT_KINDS = [
  'process-kill',
  'process-pause',
  'broker-node-kill',
  'broker-node-pause',
  'broker-node-restart',
  'postgres-restart',
  'postgres-failover',
  'path-stall',
  'path-slow',
  'path-reset',
  'model-slow',
  'model-wedge',
  'receiver-slow',
  'receiver-wedge',
  'clock-skew',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The processes of the nemesis's deployed shape, by label. */
export const PROCESSES = ['billing', 'dispatcher', 'worker', 'worker-2', 'edge', 'edge-2'] as const;
/**
 * The TCP paths with a fault-injecting proxy: services to PostgreSQL, RabbitMQ, billing, the
 * model node, the workers to billing's database (their ledger role), edges to it (their
 * admission role, ADR 0070) and edges to the workers (direct jobs, ADR 0072).
 */
export const PATHS = [
  'postgres',
  'rabbitmq',
  'billing',
  'model',
  'ledger',
  'admission',
  'jobs',
] as const;
export const BROKER_NODES = ['rabbit-0', 'rabbit-1', 'rabbit-2'] as const;

/** One start of a fault every this long on average: 20 of every kind in 30 minutes. */
export const FAULT_GAP_MS = 6_000;

interface KindShape {
  targets: readonly string[];
  /** How long the fault lasts (pause, stall, slowness, time down); 0–0 for instant ones. */
  minMs: number;
  maxMs: number;
}

const SHAPES: Record<FaultKind, KindShape> = {
  'process-kill': { targets: PROCESSES, minMs: 0, maxMs: 3_000 },
  'process-pause': { targets: PROCESSES, minMs: 1_000, maxMs: 20_000 },
  'broker-node-kill': { targets: BROKER_NODES, minMs: 3_000, maxMs: 10_000 },
  'broker-node-pause': { targets: BROKER_NODES, minMs: 1_000, maxMs: 20_000 },
  'broker-node-restart': { targets: BROKER_NODES, minMs: 0, maxMs: 3_000 },
  'postgres-restart': { targets: ['postgres'], minMs: 0, maxMs: 0 },
  'postgres-failover': { targets: ['postgres'], minMs: 0, maxMs: 0 },
  'path-stall': { targets: PATHS, minMs: 1_000, maxMs: 10_000 },
  'path-slow': { targets: PATHS, minMs: 5_000, maxMs: 20_000 },
  'path-reset': { targets: PATHS, minMs: 0, maxMs: 0 },
  'model-slow': { targets: ['model'], minMs: 5_000, maxMs: 20_000 },
  'model-wedge': { targets: ['model'], minMs: 3_000, maxMs: 15_000 },
  'receiver-slow': { targets: ['receiver'], minMs: 5_000, maxMs: 20_000 },
  'receiver-wedge': { targets: ['receiver'], minMs: 3_000, maxMs: 15_000 },
  'clock-skew': { targets: PROCESSES, minMs: 5_000, maxMs: 30_000 },
};

/** Added latency of a slowed path, ms. */
const LATENCY_MS = { min: 20, max: 300 };
/** How far a skewed clock is moved, either way, s. */
const SKEW_S = { min: 5, max: 120 };

export interface PlannedFault {
  /** Index in the schedule. */
  index: number;
  /** When it starts, from the run's start. */
  atMs: number;
  kind: FaultKind;
  /** What it hits: a process label, a broker node, a path, `postgres`, `model`, `receiver`. */
  target: string;
  durationMs: number;
  /** path-slow only: the latency added to every chunk. */
  latencyMs?: number;
  /** clock-skew only: how far the process's wall clock is moved (ahead when positive). */
  offsetMs?: number;
}

const draw = fc.record({
  jitterMs: fc.integer({ min: 0, max: FAULT_GAP_MS - 1 }),
  target: fc.nat({ max: 1_000 }),
  /** Where in the kind's duration range, in thousandths. */
  fraction: fc.integer({ min: 0, max: 1_000 }),
  latencyMs: fc.integer(LATENCY_MS),
  skewS: fc.integer(SKEW_S),
  behind: fc.boolean(),
});

/**
 * The longest run a schedule is drawn for. Every run draws this long a schedule and keeps the
 * faults that start within its own duration, so a shorter run with the same seed replays the
 * start of a longer one: a failure at minute 5 of a 30-minute run reappears in a 6-minute run.
 */
export const LONGEST_RUN_MS = 4 * 3_600_000;

/** The faults of a run of `durationMs` from `seed`, in start order. */
export function planFaults(seed: number, durationMs: number): PlannedFault[] {
  if (durationMs > LONGEST_RUN_MS) throw new Error(`a run lasts at most ${LONGEST_RUN_MS} ms`);
  let schedule = drawn.get(seed);
  if (schedule === undefined) {
    schedule = drawSchedule(seed);
    drawn.set(seed, schedule);
  }
  return schedule.filter((fault) => fault.atMs < durationMs);
}

/** Schedules drawn in this process, by seed (drawing one takes about a second). */
const drawn = new Map<number, PlannedFault[]>();

function drawSchedule(seed: number): PlannedFault[] {
  const slots = LONGEST_RUN_MS / FAULT_GAP_MS;
  const rounds = Math.ceil(slots / FAULT_KINDS.length);
  const kinds = [...FAULT_KINDS];
  const everyKindOnce = fc.shuffledSubarray(kinds, {
    minLength: kinds.length,
    maxLength: kinds.length,
  });
  const schedule = fc.tuple(
    fc.array(everyKindOnce, { minLength: rounds, maxLength: rounds }),
    fc.array(draw, { minLength: slots, maxLength: slots }),
  );
  // Without fast-check's bias towards small and extreme values: offsets and durations spread
  // over their whole ranges.
  const [order, draws] = fc.sample(fc.noBias(schedule), { seed, numRuns: 1 })[0]!;
  return draws.map((d, index) => {
    const kind = order.flat()[index]!;
    const shape = SHAPES[kind];
    const fault: PlannedFault = {
      index,
      atMs: index * FAULT_GAP_MS + d.jitterMs,
      kind,
      target: shape.targets[d.target % shape.targets.length]!,
      durationMs: Math.round(shape.minMs + ((shape.maxMs - shape.minMs) * d.fraction) / 1_000),
    };
    if (kind === 'path-slow') return { ...fault, latencyMs: d.latencyMs };
    if (kind === 'clock-skew') return { ...fault, offsetMs: (d.behind ? -1 : 1) * d.skewS * 1_000 };
    return fault;
  });
}

/** One line per fault, for the report and for comparing two schedules. */
export function describeFault(fault: PlannedFault): string {
  const latency = fault.latencyMs === undefined ? '' : ` +${fault.latencyMs} ms`;
  const offset = fault.offsetMs === undefined ? '' : ` clock ${fault.offsetMs / 1000} s`;
  return `#${fault.index} @${(fault.atMs / 1000).toFixed(1)}s ${fault.kind} ${fault.target} ${fault.durationMs} ms${latency}${offset}`;
}
