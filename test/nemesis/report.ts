import type { Violation } from './checker.js';
import type { FaultRecord } from './nemesis-faults.js';
import { describeFault } from './schedule.js';
import type { Operation } from './workload.js';

/*
 * What a nemesis run prints: the seed (to replay its faults), the counts, and for each violation
 * the smallest window of the history that shows it: the operation's attempts and the faults
 * that were acting from just before it was sent until its last settlement could have happened.
 */

/** Faults this long after an operation ended still touch its money (settlement, refund). */
const AFTERMATH_MS = 35_000;

const seconds = (ms: number | undefined) => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)}s`);

function windowOf(op: Operation, faults: FaultRecord[]): string[] {
  const from = op.invokedMs - 2_000;
  const to = (op.completedMs ?? op.invokedMs) + AFTERMATH_MS;
  const lines = op.attempts.map(
    (a) =>
      `    attempt via ${a.edge} ${seconds(a.startMs)}–${seconds(a.endMs)}: ` +
      `${a.outcome.kind}/${a.outcome.status}, ${a.outcome.relayed} chunks relayed` +
      (a.outcome.usage ? `, usage ${JSON.stringify(a.outcome.usage)}` : ''),
  );
  const acting = faults.filter(
    (f) => f.startedMs !== undefined && f.startedMs <= to && (f.endedMs ?? Infinity) >= from,
  );
  for (const f of acting) {
    lines.push(
      `    fault ${describeFault(f.fault)} acted ${seconds(f.startedMs)}–${seconds(f.endedMs)}`,
    );
  }
  return lines;
}

export function renderReport(input: {
  seed: number;
  durationMs: number;
  operations: Operation[];
  faults: FaultRecord[];
  violations: Violation[];
  doubledModelRuns: number;
  /** Processes that exited by themselves (the stack's supervisor started them again). */
  crashes: { label: string; atMs: number; exit: string }[];
}): string {
  const { seed, operations, faults, violations } = input;
  const lines = [`nemesis: seed ${seed}, ${seconds(input.durationMs)} of faults`];
  const outcomes = new Map<string, number>();
  for (const op of operations) {
    const last = op.attempts.at(-1)?.outcome;
    const key = `${op.kind} ${last?.kind ?? 'none'}/${last?.status ?? 0}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  lines.push(`operations: ${operations.length}`);
  for (const [key, count] of [...outcomes].sort()) lines.push(`  ${key}: ${count}`);
  const byKind = new Map<string, { acted: number; failed: number }>();
  for (const record of faults) {
    const tally = byKind.get(record.fault.kind) ?? { acted: 0, failed: 0 };
    if (record.startedMs !== undefined) tally.acted += 1;
    if (record.error !== undefined) tally.failed += 1;
    byKind.set(record.fault.kind, tally);
  }
  lines.push(`faults: ${faults.length}`);
  for (const [kind, tally] of [...byKind].sort()) {
    lines.push(`  ${kind}: ${tally.acted} acted, ${tally.failed} could not be done`);
  }
  lines.push(
    `model runs beyond one per client attempt (not a money rule): ${input.doubledModelRuns}`,
  );
  lines.push(
    `processes that exited by themselves (restarted; see their logs): ${input.crashes.length}`,
  );
  for (const crash of input.crashes) {
    lines.push(`  ${crash.label} at ${seconds(crash.atMs)}: exit ${crash.exit}`);
  }
  lines.push(`violations: ${violations.length}`);
  const byId = new Map(operations.map((op) => [op.id, op]));
  for (const violation of violations) {
    lines.push(`  ${violation.rule}: ${violation.opId ?? ''} ${violation.detail}`);
    const op = violation.opId === undefined ? undefined : byId.get(violation.opId);
    if (op !== undefined) {
      lines.push(
        `    ${op.kind} on ${op.customer.accountId}/${op.customer.keyName}, sent ${seconds(op.invokedMs)}`,
      );
      lines.push(...windowOf(op, faults));
    }
  }
  if (violations.length > 0) lines.push(`replay the faults: pnpm test:nemesis --seed ${seed}`);
  return lines.join('\n');
}
