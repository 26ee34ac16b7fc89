import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freeLoopbackPort } from '@gateway/testing';
import { emptyTally, type Tally } from './fault-check.js';
import { chatBody, streamBody, toolStreamBody } from './fault-client.js';
import {
  asyncRequest,
  cutEdgeConnections,
  delay,
  ensureUp,
  runRound,
  type RoundPlan,
} from './fault-round.js';
import { warningsSince } from './fault-logs.js';
import { FAULTS } from './fault-settings.js';
import { startFaultStack, type FaultStack, type Lane } from './fault-stack.js';
import { renderTable } from './fault-table.js';

/*
 * The fault suite: each scenario sends FAULTS_CONCURRENCY requests at once (one per
 * funded account), injects its fault while they run, waits for the jobs to end and checks money,
 * model calls and webhooks against what every client got. `pnpm test:faults`; the table of
 * test/faults/README.md is printed at the end.
 */

let stack: FaultStack;
/** Webhook requests the receiver had when the dispatcher was last killed. */
let seenHooks = 0;
const tallies = new Map<string, Tally>();

beforeAll(async () => {
  // Proxied: a scenario takes billing away from edge and the worker (the network, not billing).
  stack = await startFaultStack({ proxied: true });
}, 180_000);

afterAll(async () => {
  process.stdout.write(`\n${renderTable(tallies)}\n`);
  await stack?.close();
}, 60_000);

const chat = (id: string) => ({ path: '/v1/chat/completions', body: chatBody(id) });
const stream = (id: string) => ({ path: '/v1/chat/completions', body: streamBody(id) });

async function scenario(
  name: string,
  repetitions: number,
  plan: () => RoundPlan,
  on: () => FaultStack = () => stack,
) {
  const tally = emptyTally();
  tallies.set(name, tally);
  const s = on();
  const startedMs = Date.now();
  try {
    for (let i = 0; i < repetitions * FAULTS.repetitionScale; i += 1) {
      await runRound(s, name, plan(), tally);
    }
  } finally {
    s.node.setOptions({ ...FAULTS.node });
    await ensureUp(s);
  }
  if (tally.problems.length > 0) {
    const logged = warningsSince(s.logDir, startedMs) || '(none)';
    process.stdout.write(`\n${name}: what the services logged at warn and above\n${logged}\n`);
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

/** Runs `action` `afterMs` into the round. */
const at =
  (afterMs: number, action: (s: FaultStack) => Promise<unknown>) => async (s: FaultStack) => {
    await delay(afterMs);
    await action(s);
  };

/** Kills a service (kill -9) and starts it again `downMs` later. */
const killAndRestart =
  (name: keyof FaultStack['services'], downMs = 0) =>
  async (s: FaultStack) => {
    await s.services[name].kill();
    await delay(downMs);
    await s.services[name].start();
  };

const noFault = async () => undefined;

/**
 * Waits (at most 20 s) until `count` holds placed since `sinceMs` exist, or, with `published`,
 * have had their publishing settled: marked published, or released by the publish grace. With a
 * stopped worker a job reaches the queue only after edge's direct offer times out, and its mark
 * comes a deferral later; the suite's grace (3 s) can pass first, and the sweeper then releases
 * the hold (`released_unpublished`), whose mark is refused: it is never marked (CI, 2026-11-30:
 * 16 holds released at 3.8 s, the offers had timed out at 3.0 s). Its job is queued all the
 * same. A bound on a wait, not a speed check.
 */
async function holdsSince(
  s: FaultStack,
  sinceMs: number,
  count: number,
  published = false,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { rows } = await s.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM holds
        WHERE created_at >= $1
          AND ($2::boolean IS FALSE OR published_at IS NOT NULL OR released_unpublished)`,
      [new Date(sinceMs), published],
    );
    if (rows[0]!.n >= count) return;
    await delay(2);
  }
  const what = published ? 'marked published or released unpublished' : 'placed';
  throw new Error(`fewer than ${count} holds ${what} in 20 s`);
}

const firstHoldSince = (s: FaultStack, sinceMs: number) => holdsSince(s, sinceMs, 1);

/** Streams slow enough (about 3.5 s) that a client leaving early leaves most of the generation. */
const slowStreams = () => stack.node.setOptions({ tokensPerSecond: 10 });
const jitter = (fromMs: number, toMs: number) => fromMs + Math.random() * (toMs - fromMs);

interface Scenario {
  title: string;
  name: string;
  repetitions: number;
  plan: () => RoundPlan;
}

const SCENARIOS: Scenario[] = [
  {
    title: 'worker killed during non-streamed jobs, restarted',
    name: 'worker-kill-json',
    repetitions: 3,
    plan: () => ({ request: chat, fault: at(700, killAndRestart('worker')) }),
  },
  {
    title: 'worker killed during streams, restarted',
    name: 'worker-kill-stream',
    repetitions: 3,
    plan: () => ({ request: stream, fault: at(700, killAndRestart('worker')) }),
  },
  {
    title: 'edge killed between admission and publish, restarted',
    name: 'edge-kill-admission',
    repetitions: 3,
    plan: () => ({
      request: chat,
      // Once the round's first hold exists, the other admissions are in flight; up to 150 ms
      // later some jobs are published too (their answers can no longer reach anyone).
      fault: async (s) => {
        await firstHoldSince(s, Date.now() - 50);
        await delay(jitter(0, 150));
        await killAndRestart('edge')(s);
      },
    }),
  },
  {
    title: `billing stopped (SIGSTOP) for ${FAULTS.billingPauseMs} ms while jobs settle`,
    name: 'billing-paused',
    repetitions: 2,
    plan: () => ({
      request: chat,
      fault: at(1_000, async (s) => {
        s.services.billing.pause();
        await delay(FAULTS.billingPauseMs);
        s.services.billing.resume();
      }),
    }),
  },
  {
    title: 'billing killed during settlement, restarted',
    name: 'billing-kill-settle',
    repetitions: 3,
    plan: () => ({
      request: chat,
      fault: at(jitter(1_300, 1_600), killAndRestart('billing', 1_000)),
    }),
  },
  {
    title: 'RabbitMQ restarted with jobs in flight (clients retry with their Idempotency-Key)',
    name: 'rabbitmq-restart',
    repetitions: 2,
    plan: () => ({
      request: chat,
      retryWithKey: true,
      fault: at(700, async (s) => {
        await s.infra.rabbitmq.stop();
        await s.infra.rabbitmq.start();
      }),
    }),
  },
  {
    title: "edge's broker connection closed as the node answers (clients retry with their key)",
    name: 'edge-connection-closed',
    repetitions: 3,
    plan: () => ({
      request: chat,
      retryWithKey: true,
      fault: at(jitter(1_300, 1_600), async (s) => {
        expect(await cutEdgeConnections(s)).toBeGreaterThan(0);
      }),
    }),
  },
  {
    title: 'dispatcher killed mid-delivery, restarted',
    name: 'dispatcher-kill',
    repetitions: 3,
    plan: () => ({
      request: (id) => {
        // Deliveries take 300 ms to answer: the kill lands while some are in flight.
        stack.receiver.setResponder(`/hook/${id}`, () => ({ status: 204, delayMs: 300 }));
        return asyncRequest(stack)(id);
      },
      fault: async (s) => {
        await firstNewWebhook(s);
        await killAndRestart('dispatcher')(s);
      },
    }),
  },
  {
    title: 'PostgreSQL restarted with sync and async jobs in flight',
    name: 'postgres-restart',
    repetitions: 2,
    plan: () => ({
      request: (id, lane) => (lane.index % 2 === 0 ? chat(id) : asyncRequest(stack)(id)),
      fault: at(700, (s) => s.infra.postgres.restart()),
    }),
  },
  {
    title: 'edge killed while its streams wait on a stopped worker, restarted',
    name: 'edge-kill-stream-unread',
    repetitions: 1,
    plan: () => ({
      request: stream,
      // The worker runs the jobs after edge is gone: every reply, the first chunk too, waits in
      // the dead edge's queue until it dead-letters (30 s); nothing reached a client.
      fault: async (s) => {
        const sinceMs = Date.now() - 50;
        s.services.worker.pause();
        try {
          await holdsSince(s, sinceMs, s.lanes.length, true);
          await s.services.edge.kill();
        } finally {
          s.services.worker.resume();
        }
        await s.services.edge.start();
      },
    }),
  },
  {
    title:
      'billing unreachable from edge and the worker (its API, and their paths to its database) past the publish grace while jobs run',
    name: 'billing-unreachable-past-grace',
    repetitions: 1,
    plan: () => {
      // Jobs end after the grace and a sweep: the sweeper has released their unmarked holds.
      stack.node.setOptions({ firstTokenLatencyMs: FAULTS.holdPublishGraceMs + 1_000 });
      return {
        request: chat,
        fault: async (s) => {
          await holdsSince(s, Date.now() - 50, s.lanes.length);
          // Edge has its admissions' answers and publishes the jobs before the path goes.
          await delay(300);
          const closed = await freeLoopbackPort();
          const databasePorts = s.paths!.ledger.upstreamPorts;
          const toDatabase = [s.paths!.ledger, s.paths!.admission];
          s.paths!.billing.repoint([closed]);
          for (const path of toDatabase) path.repoint([closed]);
          // The marks fail, the holds are released, the answers go out with their settlements
          // queued through the broker; then the paths come back.
          await delay(FAULTS.holdPublishGraceMs + 5_000);
          s.paths!.billing.repoint([s.services.billing.port]);
          for (const path of toDatabase) path.repoint(databasePorts);
        },
      };
    },
  },
  {
    title: 'clients that disconnect before the first chunk',
    name: 'client-left-before-first-chunk',
    repetitions: 3,
    plan: () => {
      stack.node.setOptions({ firstTokenLatencyMs: 1_500 });
      return {
        request: (id) => ({ ...stream(id), leave: { afterMs: jitter(500, 900) } }),
        fault: noFault,
      };
    },
  },
  {
    title: 'clients that disconnect mid-stream',
    name: 'client-left-mid-stream',
    repetitions: 3,
    plan: () => {
      slowStreams();
      return { request: (id) => ({ ...stream(id), leave: { afterChunks: 3 } }), fault: noFault };
    },
  },
  {
    title: 'clients that disconnect during a tool-call stream',
    name: 'client-left-tool-stream',
    repetitions: 3,
    plan: () => {
      slowStreams();
      return {
        request: (id) => ({ ...stream(id), body: toolStreamBody(id), leave: { afterChunks: 3 } }),
        fault: noFault,
      };
    },
  },
];

/** Waits (at most 30 s) for a webhook request the receiver had not seen at the last call. */
async function firstNewWebhook(s: FaultStack): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (s.receiver.requests.length === seenHooks && Date.now() < deadline) await delay(20);
  seenHooks = s.receiver.requests.length;
}

/** A repetition takes seconds; a scenario whose jobs hang waits out its settle bound each time. */
const timeoutMs = (repetitions: number) =>
  repetitions * FAULTS.repetitionScale * (FAULTS.settleWaitMs + FAULTS.billingPauseMs + 30_000);

describe('fault suite', () => {
  for (const { title, name, repetitions, plan } of SCENARIOS) {
    it(title, () => scenario(name, repetitions, plan), timeoutMs(repetitions));
  }
});

/*
 * The high-availability shape: PostgreSQL with a synchronous standby and RabbitMQ as a
 * three-node cluster, the services reaching each through one address (Kubernetes Services in
 * production). A broker node killed (kill -9) while jobs run and restarted seconds later: quorum
 * queues keep a majority, a client on the lost node reconnects to another. Then PostgreSQL fails
 * over: the primary crashes, the standby is promoted, the address moves; the services recover
 * without a restart and no acknowledged commit is lost.
 */
describe('fault suite, high availability', () => {
  let haStack: FaultStack;
  let round = 0;

  beforeAll(async () => {
    haStack = await startFaultStack({ shape: 'ha' });
  }, 240_000);

  afterAll(async () => {
    await haStack?.close();
  }, 60_000);

  const killBrokerNode = async (s: FaultStack) => {
    // A different node each round: the one edge, the worker or a queue's leader is on varies.
    const node = s.brokerCluster!.nodes[round++ % s.brokerCluster!.nodes.length]!;
    await node.kill();
    await delay(FAULTS.brokerNodeDownMs);
    await node.start();
  };

  const mixed = (id: string, lane: Lane) =>
    lane.index % 2 === 0 ? chat(id) : asyncRequest(haStack)(id);

  it(
    'one of three RabbitMQ nodes killed with jobs in flight, restarted (clients retry with their key)',
    () =>
      scenario(
        'rabbitmq-node-kill',
        3,
        () => ({ request: mixed, retryWithKey: true, fault: at(700, killBrokerNode) }),
        () => haStack,
      ),
    timeoutMs(3),
  );

  // The old primary is rebuilt as the new standby, so each repetition has one to fail over to.
  const failOver = async (s: FaultStack) => {
    await s.postgresStandby!.failover();
    await s.postgresStandby!.rejoin();
  };
  it(
    'PostgreSQL failed over to its synchronous standby with jobs in flight (clients retry with their key)',
    () =>
      scenario(
        'postgres-failover',
        1,
        () => ({
          request: mixed,
          retryWithKey: true,
          fault: at(700, failOver),
        }),
        () => haStack,
      ),
    timeoutMs(1),
  );
});
