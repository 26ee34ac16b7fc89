import type { ClientOutcome, Usage } from './fault-client.js';
import { PRICES, type FaultStack, type Lane } from './fault-stack.js';
import { FAULTS } from './fault-settings.js';

/*
 * What the suite checks after each repetition (column meanings: test/faults/README.md): the
 * ledger against what every client got, the stand-in's model calls per request and the webhook
 * receiver's deliveries per job. One request per lane (account) per repetition, so an account's
 * holds created since the repetition began are exactly that request's (and its retries').
 */

export interface Sent {
  id: string;
  lane: Lane;
  /** The first try, then any retry with the same Idempotency-Key. */
  outcomes: ClientOutcome[];
  async: boolean;
}

export interface Tally {
  repetitions: number;
  requests: number;
  answers: number;
  charges: number;
  modelCalls: number;
  pendingHolds: number;
  lost: number;
  doubled: number;
  /** Charged though the client got no output at all and did not leave: no way to get it. */
  chargedUnanswered: number;
  /** Requests whose client left but whose model call ran to the end (a lost cancellation). */
  unstopped: number;
  ledgerViolations: number;
  problems: string[];
}

export const emptyTally = (): Tally => ({
  repetitions: 0,
  requests: 0,
  answers: 0,
  charges: 0,
  modelCalls: 0,
  pendingHolds: 0,
  lost: 0,
  doubled: 0,
  chargedUnanswered: 0,
  unstopped: 0,
  ledgerViolations: 0,
  problems: [],
});

/** What tells whether a hold charged the customer (the fault suite's and the nemesis's rows). */
export interface ChargedHold {
  status: string;
  settled: string | null;
  /** The charge was given back: the answer reached nobody (a ledger reversal). */
  refunded: boolean;
}

interface HoldRow extends ChargedHold {
  account_id: string;
}

/** A hold that charged the customer and kept the charge. */
export const charged = (hold: ChargedHold) =>
  hold.status === 'settled' && BigInt(hold.settled ?? 0) > 0n && !hold.refunded;

/** One webhook request the receiver got: its delivery id and the job's status. */
export interface Delivery {
  id: string;
  status: string;
}

/** What an answer with this usage costs at the suite's prices, µDZD. */
export const priced = (usage: Usage) =>
  BigInt(usage.prompt_tokens * PRICES.input + (usage.completion_tokens ?? 0) * PRICES.output);

async function holdsSince(stack: FaultStack, since: Date): Promise<HoldRow[]> {
  const { rows } = await stack.sql.query<HoldRow>(
    `SELECT account_id, status::text AS status, settled_amount_micro_dzd::text AS settled,
            refunded_at IS NOT NULL AS refunded
       FROM holds WHERE created_at >= $1 AND account_id = ANY($2)`,
    [since, stack.lanes.map((lane) => lane.accountId)],
  );
  return rows;
}

/** The webhook requests for request `id` (its URL is `/hook/<id>`). */
export function deliveriesOf(stack: FaultStack, id: string): Delivery[] {
  return stack.receiver.requestsTo(`/hook/${id}`).map((request) => ({
    id: String(request.headers['x-service-delivery-id']),
    status: String((JSON.parse(request.body.toString('utf8')) as { status?: unknown }).status),
  }));
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until no hold of the round is pending, the node is idle, every accepted
 * async job got a webhook, no request is charged without an answer (an answer nobody read is
 * refunded once edge's reply queue dead-letters it, 30 s after edge died) and none answered is
 * uncharged (a settlement queued while billing was away is applied after the answer): the
 * moment "beyond its job" begins. */
export async function quiesce(stack: FaultStack, since: Date, sent: Sent[]): Promise<void> {
  const deadline = Date.now() + FAULTS.settleWaitMs;
  while (Date.now() < deadline) {
    const holds = await holdsSince(stack, since).catch(() => undefined);
    const waitingHooks = sent.filter(
      (s) =>
        s.outcomes.some((o) => o.kind === 'accepted') && deliveriesOf(stack, s.id).length === 0,
    );
    const quiet =
      holds !== undefined &&
      holds.every((hold) => hold.status !== 'pending') &&
      stack.node.stats().outstanding === 0 &&
      waitingHooks.length === 0 &&
      !sent.some((s) => chargedUnanswered(s, holds, deliveriesOf(stack, s.id))) &&
      !sent.some((s) => answeredUncharged(s, holds));
    if (quiet) return;
    await delay(250);
  }
}

interface Verdict {
  lost: string | null;
  doubled: string | null;
  unstopped: string | null;
}

function judge(sent: Sent, holds: HoldRow[], completed: number, hooks: Delivery[]): Verdict {
  const settled = holds.filter(charged);
  const chargedMicro = settled.reduce((sum, h) => sum + BigInt(h.settled ?? 0), 0n);
  const answer = sent.outcomes.find((o) => o.kind === 'answer');
  const relayed = sent.outcomes.some((o) => o.relayed > 0);
  const accepted = sent.outcomes.some((o) => o.kind === 'accepted');
  const succeeded = hooks.some((hook) => hook.status === 'succeeded');
  const cost = answer?.usage === undefined ? undefined : priced(answer.usage);
  const lost =
    (answer && settled.length === 0 && 'answered, not charged') ||
    (cost !== undefined &&
      chargedMicro < cost &&
      `answered ${cost} µDZD, charged ${chargedMicro}`) ||
    (relayed && settled.length === 0 && 'output relayed, not charged') ||
    (accepted && hooks.length === 0 && 'accepted async job, no webhook') ||
    (succeeded && settled.length === 0 && 'succeeded webhook, not charged') ||
    null;
  const doubled =
    (settled.length > 1 && `${settled.length} settlements`) ||
    // Each attempt of the client may run the model once: a retry after an error (the answer
    // was lost, nothing charged, the Idempotency-Key released) is a run the docs promise.
    (completed > Math.max(1, sent.outcomes.length) &&
      `${completed} complete generations at the node for ${sent.outcomes.length} attempt(s)`) ||
    (new Set(hooks.map((hook) => hook.id)).size > 1 && 'several webhook deliveries') ||
    (cost !== undefined &&
      chargedMicro > cost &&
      `answered ${cost} µDZD, charged ${chargedMicro}`) ||
    null;
  const left = sent.outcomes.some((o) => o.kind === 'left');
  const unstopped = left && completed > 0 ? 'client left, the model call ran to the end' : null;
  return { lost, doubled, unstopped };
}

const kindsOf = (request: Sent) => request.outcomes.map((o) => `${o.kind}/${o.status}`).join(',');

/** Output reached the client, or it left on purpose (billed by the cancellation policy). */
const gotSomething = (request: Sent) =>
  request.outcomes.some((o) => o.kind === 'left' || o.relayed > 0);

const answeredOrNotified = (request: Sent, hooks: Delivery[]) =>
  request.outcomes.some((o) => o.kind === 'answer') ||
  hooks.some((hook) => hook.status === 'succeeded');

/** Charged, though the client got nothing and did not leave. `holds`: the round's or its own. */
function chargedUnanswered(request: Sent, holds: HoldRow[], hooks: Delivery[]): boolean {
  const own = holds.filter((hold) => hold.account_id === request.lane.accountId);
  return own.some(charged) && !answeredOrNotified(request, hooks) && !gotSomething(request);
}

/**
 * Answered, and no hold of its account charged (yet). With billing unreachable the answer goes
 * out first and its settlement follows through billing's queue (docs/job-protocol.md §5), so
 * the check waits for it as it waits for a refund; past the wait it is a loss (`judge`).
 */
function answeredUncharged(request: Sent, holds: HoldRow[]): boolean {
  const own = holds.filter((hold) => hold.account_id === request.lane.accountId);
  return request.outcomes.some((o) => o.kind === 'answer') && !own.some(charged);
}

/** Checks one repetition and adds it to the scenario's tally. */
export async function checkRound(
  stack: FaultStack,
  since: Date,
  sent: Sent[],
  tally: Tally,
): Promise<void> {
  await quiesce(stack, since, sent);
  const holds = await holdsSince(stack, since);
  const calls = stack.node.markedCalls();
  tally.repetitions += 1;
  for (const request of sent) {
    const own = holds.filter((hold) => hold.account_id === request.lane.accountId);
    const hooks = deliveriesOf(stack, request.id);
    const verdict = judge(request, own, calls[request.id]?.completed ?? 0, hooks);
    const charges = own.filter(charged);
    const answered = answeredOrNotified(request, hooks);
    tally.requests += 1;
    tally.answers += answered ? 1 : 0;
    tally.charges += charges.length;
    tally.modelCalls += calls[request.id]?.started ?? 0;
    tally.pendingHolds += own.filter((hold) => hold.status === 'pending').length;
    if (chargedUnanswered(request, own, hooks)) {
      tally.chargedUnanswered += 1;
      tally.problems.push(`charged, no answer: ${request.id} (client: ${kindsOf(request)})`);
    }
    for (const [column, problem] of [
      ['lost', verdict.lost],
      ['doubled', verdict.doubled],
      ['unstopped', verdict.unstopped],
    ] as const) {
      if (problem === null) continue;
      tally[column] += 1;
      tally.problems.push(`${column}: ${request.id} (client: ${kindsOf(request)}): ${problem}`);
    }
  }
  const ledger = await checkLedger(stack);
  if (ledger.problem !== null) {
    tally.ledgerViolations += ledger.violations;
    tally.problems.push(`ledger check: ${ledger.problem}`);
  }
}

/** The ledger's invariant check (`GET /admin/v1/ledger/check`): what it found, if anything. */
export async function checkLedger(
  stack: FaultStack,
): Promise<{ problem: string | null; violations: number }> {
  const check = await stack.admin('GET', '/ledger/check');
  const report = JSON.parse(check.body) as { ok?: boolean; violations?: unknown[] };
  if (check.status === 200 && report.ok === true) return { problem: null, violations: 0 };
  return {
    problem: `${check.status} ${check.body.slice(0, 300)}`,
    violations: Math.max(1, report.violations?.length ?? 0),
  };
}
