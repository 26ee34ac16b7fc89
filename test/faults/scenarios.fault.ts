import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { emptyTally, type Tally } from './fault-check.js';
import { chatBody, streamBody, toolStreamBody } from './fault-client.js';
import {
  asyncRequest,
  closeEdgeConnections,
  delay,
  ensureUp,
  runRound,
  type RoundPlan,
} from './fault-round.js';
import { FAULTS } from './fault-settings.js';
import { startFaultStack, type FaultStack } from './fault-stack.js';
import { renderTable } from './fault-table.js';

/*
 * Issue 15's fault suite: each scenario sends FAULTS_CONCURRENCY requests at once (one per
 * funded account), injects its fault while they run, waits for the jobs to end and checks money,
 * model calls and webhooks against what every client got. `pnpm test:faults`; the table of
 * test/faults/README.md is printed at the end.
 */

let stack: FaultStack;
/** Webhook requests the receiver had when the dispatcher was last killed. */
let seenHooks = 0;
const tallies = new Map<string, Tally>();

beforeAll(async () => {
  stack = await startFaultStack();
}, 180_000);

afterAll(async () => {
  process.stdout.write(`\n${renderTable(tallies)}\n`);
  await stack?.close();
}, 60_000);

const chat = (id: string) => ({ path: '/v1/chat/completions', body: chatBody(id) });
const stream = (id: string) => ({ path: '/v1/chat/completions', body: streamBody(id) });

async function scenario(name: string, repetitions: number, plan: () => RoundPlan) {
  const tally = emptyTally();
  tallies.set(name, tally);
  try {
    for (let i = 0; i < repetitions * FAULTS.repetitionScale; i += 1) {
      await runRound(stack, name, plan(), tally);
    }
  } finally {
    stack.node.setOptions({ ...FAULTS.node });
    await ensureUp(stack);
  }
  expect(tally.problems).toEqual([]);
  const { lost, doubled, pendingHolds, ledgerViolations, unstopped, chargedUnanswered } = tally;
  expect({ lost, doubled, pendingHolds, ledgerViolations, unstopped, chargedUnanswered }).toEqual({
    chargedUnanswered: 0,
    lost: 0,
    doubled: 0,
    pendingHolds: 0,
    ledgerViolations: 0,
    unstopped: 0,
  });
}

/** Kills a service (kill -9) `afterMs` into the round and starts it again `downMs` later. */
const killAndRestart = (name: keyof FaultStack['services'], afterMs: number, downMs = 0) =>
  async function fault(s: FaultStack) {
    await delay(afterMs);
    await s.services[name].kill();
    await delay(downMs);
    await s.services[name].start();
  };

const MINUTE_MS = 60_000;

async function firstHoldSince(s: FaultStack, sinceMs: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await s.sql.query('SELECT 1 FROM holds WHERE created_at >= $1 LIMIT 1', [
      new Date(sinceMs),
    ]);
    if (rows.length > 0) return;
    await delay(2);
  }
  throw new Error('no hold was placed within 10 s');
}

/** Streams slow enough (about 3.5 s) that a client leaving early leaves most of the generation. */
const slowStreams = () => stack.node.setOptions({ tokensPerSecond: 10 });
const jitter = (fromMs: number, toMs: number) => fromMs + Math.random() * (toMs - fromMs);

describe('fault suite (issue 15)', () => {
  it(
    'worker killed during non-streamed jobs, restarted',
    () =>
      scenario('worker-kill-json', 3, () => ({
        request: chat,
        fault: killAndRestart('worker', 700),
      })),
    3 * MINUTE_MS,
  );

  it(
    'worker killed during streams, restarted',
    () =>
      scenario('worker-kill-stream', 3, () => ({
        request: stream,
        fault: killAndRestart('worker', 700),
      })),
    3 * MINUTE_MS,
  );

  it(
    'edge killed between admission and publish, restarted',
    () =>
      scenario('edge-kill-admission', 3, () => ({
        request: chat,
        fault: async (s) => {
          // The first hold of the round exists: the other admissions are in flight.
          await firstHoldSince(s, Date.now() - 50);
          await s.services.edge.kill();
          await s.services.edge.start();
        },
      })),
    3 * MINUTE_MS,
  );

  it(
    `billing stopped (SIGSTOP) for ${FAULTS.billingPauseMs} ms while jobs settle`,
    () =>
      scenario('billing-paused', 2, () => ({
        request: chat,
        fault: async (s) => {
          await delay(1_000);
          s.services.billing.pause();
          await delay(FAULTS.billingPauseMs);
          s.services.billing.resume();
        },
      })),
    4 * MINUTE_MS,
  );

  it(
    'billing killed during settlement, restarted',
    () =>
      scenario('billing-kill-settle', 3, () => ({
        request: chat,
        fault: killAndRestart('billing', jitter(1_300, 1_600), 1_000),
      })),
    3 * MINUTE_MS,
  );

  it(
    'RabbitMQ restarted with jobs in flight (clients retry with their Idempotency-Key)',
    () =>
      scenario('rabbitmq-restart', 2, () => ({
        request: chat,
        retryWithKey: true,
        fault: async (s) => {
          await delay(700);
          await s.infra.rabbitmq.stop();
          await s.infra.rabbitmq.start();
        },
      })),
    4 * MINUTE_MS,
  );

  it(
    "edge's broker connection closed as the node answers (clients retry with their key)",
    () =>
      scenario('edge-connection-closed', 3, () => ({
        request: chat,
        retryWithKey: true,
        fault: async (s) => {
          await delay(jitter(1_300, 1_600));
          expect(await closeEdgeConnections(s)).toBeGreaterThan(0);
        },
      })),
    3 * MINUTE_MS,
  );

  it(
    'dispatcher killed mid-delivery, restarted',
    () =>
      scenario('dispatcher-kill', 3, () => ({
        request: (id) => {
          // Deliveries take 300 ms to answer: the kill lands while some are in flight.
          stack.receiver.setResponder(`/hook/${id}`, () => ({ status: 204, delayMs: 300 }));
          return asyncRequest(stack)(id);
        },
        fault: async (s) => {
          const deadline = Date.now() + 30_000;
          while (s.receiver.requests.length === seenHooks && Date.now() < deadline) {
            await delay(20);
          }
          seenHooks = s.receiver.requests.length;
          await s.services.dispatcher.kill();
          await s.services.dispatcher.start();
        },
      })),
    3 * MINUTE_MS,
  );

  it(
    'PostgreSQL restarted with sync and async jobs in flight',
    () =>
      scenario('postgres-restart', 2, () => ({
        request: (id, lane) => (lane.index % 2 === 0 ? chat(id) : asyncRequest(stack)(id)),
        fault: async (s) => {
          await delay(700);
          await s.infra.postgres.restart();
        },
      })),
    4 * MINUTE_MS,
  );

  it(
    'clients that disconnect before the first chunk',
    () =>
      scenario('client-left-before-first-chunk', 3, () => {
        stack.node.setOptions({ firstTokenLatencyMs: 1_500 });
        return {
          request: (id) => ({ ...stream(id), leave: { afterMs: jitter(500, 900) } }),
          fault: async () => undefined,
        };
      }),
    3 * MINUTE_MS,
  );

  it(
    'clients that disconnect mid-stream',
    () =>
      scenario('client-left-mid-stream', 3, () => {
        slowStreams();
        return {
          request: (id) => ({ ...stream(id), leave: { afterChunks: 3 } }),
          fault: async () => undefined,
        };
      }),
    3 * MINUTE_MS,
  );

  it(
    'clients that disconnect during a tool-call stream',
    () =>
      scenario('client-left-tool-stream', 3, () => {
        slowStreams();
        return {
          request: (id) => ({
            path: '/v1/chat/completions',
            body: toolStreamBody(id),
            leave: { afterChunks: 3 },
          }),
          fault: async () => undefined,
        };
      }),
    3 * MINUTE_MS,
  );
});
