import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { charged, checkLedger, deliveriesOf } from '../faults/fault-check.js';
import { ensureUp } from '../faults/fault-round.js';
import { FAULTS } from '../faults/fault-settings.js';
import { LOG_DIR, startFaultStack, type FaultStack } from '../faults/fault-stack.js';
import {
  checkAccounts,
  checkOperation,
  gotNothing,
  readHolds,
  type HoldRow,
  type Violation,
} from './checker.js';
import { openCustomers, type Customer } from './customers.js';
import { startNemesis, type FaultRecord, type ReceiverMood } from './nemesis-faults.js';
import { NEMESIS } from './nemesis-settings.js';
import { renderReport } from './report.js';
import { planFaults } from './schedule.js';
import { runWorkload, type Operation } from './workload.js';

/*
 * The nemesis (test/nemesis/README.md): the deployed shape with two edges and two workers on a
 * RabbitMQ cluster and a PostgreSQL pair, an open-loop mixed workload, faults drawn from a seed,
 * then one check over the whole history.
 */

let stack: FaultStack;
const NEMESIS_LOGS = path.join(LOG_DIR, 'nemesis');

beforeAll(async () => {
  stack = await startFaultStack({
    shape: 'ha',
    edges: 2,
    workers: 2,
    proxied: true,
    movableClocks: true,
    supervised: true,
    logDir: 'nemesis',
    env: {
      // Long enough for a webhook to outlast a wedged receiver (at most 15 s) and a paused
      // dispatcher (20 s).
      dispatcher: { RETRY_SCHEDULE_A_MS: '0,1000,2000,5000,10000,20000,30000' },
      // A wedged node is given up on in 10 s, not 30 s: the run's jobs end within it.
      worker: { NODE_FIRST_BYTE_TIMEOUT_MS: '10000' },
    },
  });
}, 300_000);

afterAll(async () => {
  await stack?.close();
}, 120_000);

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every fault's effect undone, every process running and ready. */
async function repair(): Promise<void> {
  for (const replica of stack.replicas) replica.clock?.skew(0);
  stack.node.clearFault();
  stack.node.setOptions({ ...FAULTS.node });
  for (const node of stack.brokerCluster?.nodes ?? []) node.resume();
  await ensureUp(stack);
}

/** The holds of each operation, by its `X-Request-Id`. */
function holdsByOperation(holds: HoldRow[]): (op: Operation) => HoldRow[] {
  const byId = new Map<string, HoldRow[]>();
  for (const hold of holds) {
    if (hold.request_id === null) continue;
    byId.set(hold.request_id, [...(byId.get(hold.request_id) ?? []), hold]);
  }
  return (op) => byId.get(op.id) ?? [];
}

/** Until nothing is left in flight (bounded): the moment the checker's rules must hold. */
async function settle(operations: Operation[], accountIds: string[]): Promise<void> {
  const deadline = Date.now() + NEMESIS.settleWaitMs;
  while (Date.now() < deadline) {
    const holds = await readHolds(stack, accountIds).catch(() => undefined);
    const holdsOf = holdsByOperation(holds ?? []);
    const quiet =
      holds !== undefined &&
      holds.every((hold) => hold.status !== 'pending') &&
      stack.node.stats().outstanding === 0 &&
      operations.every(
        (op) =>
          (!op.attempts.some((a) => a.outcome.kind === 'accepted') ||
            deliveriesOf(stack, op.id).length > 0) &&
          // An answer that reached nobody is refunded once its reply dead-letters (30 s).
          !(gotNothing(op) && holdsOf(op).some(charged)),
      );
    if (quiet) return;
    await delay(1_000);
  }
}

async function checkReceipts(
  operations: Operation[],
  holdsOf: (op: Operation) => HoldRow[],
): Promise<Violation[]> {
  const found: Violation[] = [];
  const single = operations.filter((op) => holdsOf(op).length === 1).slice(0, 40);
  for (const op of single) {
    const hold = holdsOf(op)[0]!;
    const answer = await stack.admin('GET', `/accounts/${op.customer.accountId}/requests/${op.id}`);
    const receipt = JSON.parse(answer.body) as { net_micro_dzd?: string };
    const kept = charged(hold) ? hold.settled : '0';
    if (answer.status !== 200 || receipt.net_micro_dzd !== kept) {
      found.push({
        rule: 'receipts equal the ledger',
        detail: `${answer.status} net ${receipt.net_micro_dzd}, ledger ${kept}`,
        opId: op.id,
      });
    }
  }
  return found;
}

function doubledModelRuns(operations: Operation[]): number {
  const calls = stack.node.markedCalls();
  return operations.filter((op) => (calls[op.id]?.completed ?? 0) > Math.max(1, op.attempts.length))
    .length;
}

it('keeps every dinar exact and every job delivered under seeded, overlapping faults', async () => {
  const { seed, durationMs } = NEMESIS;
  const customers = await openCustomers(stack, seed);
  const everyone: Customer[] = [...customers.plain, ...customers.limited, ...customers.poor];
  const accountIds = [...new Set(everyone.map((c) => c.accountId))];
  let mood: ReceiverMood = 'normal';
  const plan = planFaults(seed, durationMs);
  const t0Ms = Date.now();
  const nemesis = startNemesis(
    { stack, setReceiverMood: (next) => (mood = next) },
    plan,
    t0Ms,
    (line) => process.stdout.write(`${line}\n`),
  );
  const stopFaults = setTimeout(() => nemesis.stop(), durationMs);
  const workload = runWorkload({
    stack,
    customers,
    seed,
    ratePerSecond: NEMESIS.ratePerSecond,
    durationMs,
    t0Ms,
    webhookUrl: stack.webhookUrl,
    onAsync: (id) =>
      stack.receiver.setResponder(`/hook/${id}`, () => {
        if (mood === 'slow') return { status: 204, delayMs: 1_000 + Math.random() * 4_000 };
        // Past the dispatcher's 3 s attempt timeout: every attempt fails until the mood ends.
        if (mood === 'wedged') return { status: 204, delayMs: 30_000 };
        return { status: 204 };
      }),
  });
  const faults: FaultRecord[] = await nemesis.done;
  clearTimeout(stopFaults);
  await repair();
  const operations = await workload;
  await settle(operations, accountIds);
  const holds = await readHolds(stack, accountIds);
  const holdsOf = holdsByOperation(holds);
  const ledger = await checkLedger(stack);
  const violations: Violation[] = [
    ...operations.flatMap((op) => checkOperation(op, holdsOf(op), deliveriesOf(stack, op.id))),
    ...(await checkAccounts(stack, everyone, holds)),
    ...(await checkReceipts(operations, holdsOf)),
    ...(ledger.problem === null ? [] : [{ rule: 'ledger invariant', detail: ledger.problem }]),
  ];
  mkdirSync(NEMESIS_LOGS, { recursive: true });
  writeFileSync(
    path.join(NEMESIS_LOGS, `history-${seed}.json`),
    JSON.stringify({ seed, durationMs, faults, operations }, (_key, value: unknown) =>
      typeof value === 'bigint' ? value.toString() : value,
    ),
  );
  const report = renderReport({
    seed,
    durationMs,
    operations,
    faults,
    violations,
    doubledModelRuns: doubledModelRuns(operations),
    crashes: stack.replicas.flatMap((replica) =>
      replica.crashes.map((crash) => ({
        label: replica.label,
        atMs: crash.atMs - t0Ms,
        exit: String(crash.code ?? crash.signal),
      })),
    ),
  });
  process.stdout.write(`\n${report}\n`);
  writeFileSync(path.join(NEMESIS_LOGS, `report-${seed}.txt`), report);
  expect(violations).toEqual([]);
});
