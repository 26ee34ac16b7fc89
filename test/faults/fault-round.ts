import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { waitForStatus } from '@gateway/testing';
import { checkRound, type Sent, type Tally } from './fault-check.js';
import { asyncBody, asyncPath, send, type ClientOutcome, type Leave } from './fault-client.js';
import type { FaultStack, Lane } from './fault-stack.js';

/*
 * One repetition of a scenario: every lane sends one request at once while the fault runs;
 * then the round is checked (fault-check.ts).
 */

export interface RequestPlan {
  path: string;
  body: unknown;
  leave?: Leave;
  async?: boolean;
}

export interface RoundPlan {
  request(id: string, lane: Lane): RequestPlan;
  /** Runs alongside the requests, from the moment they are sent. */
  fault(stack: FaultStack): Promise<void>;
  /** Sends an Idempotency-Key, and retries once with it after an error or a cut connection. */
  retryWithKey?: boolean;
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every process runs and answers ready (a scenario may have left one down on failure). */
export async function ensureUp(stack: FaultStack): Promise<void> {
  await reviveBrokers(stack);
  for (const replica of stack.replicas) {
    replica.resume();
    if (!replica.running()) await replica.start();
    await waitForStatus(`${replica.baseUrl}/readyz`, 200, 120_000);
  }
}

/**
 * Every fault restarts the broker node it stops before its round is checked, so a node found not
 * running here exited on its own: once, the host's VM was forked as a scenario restarted the
 * broker, the new node died, and every later round waited on services that could not get ready
 * until CI's time ran out. It is started again, and said so, so that the suite goes on.
 */
export async function reviveBrokers(
  stack: Pick<FaultStack, 'infra'>,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const nodes = stack.infra.brokerCluster?.nodes ?? [stack.infra.rabbitmq];
  for (const node of nodes) {
    if (node.running()) continue;
    log(`fault suite: RabbitMQ node ${node.nodeName} is not running (it exited); starting it`);
    await node.start();
  }
}

async function sendOne(stack: FaultStack, plan: RoundPlan, sent: Sent): Promise<void> {
  const request = plan.request(sent.id, sent.lane);
  const attempt = (): Promise<ClientOutcome> =>
    send({
      port: stack.services.edge.port,
      apiKey: sent.lane.apiKey,
      path: request.path,
      body: request.body,
      ...(request.leave && { leave: request.leave }),
      ...(plan.retryWithKey && { idempotencyKey: `key-${sent.id}` }),
    });
  sent.outcomes.push(await attempt());
  const failed = ['error', 'cut'].includes(sent.outcomes[0]!.kind);
  if (plan.retryWithKey && failed) {
    // A real client retries once the gateway answers again.
    await waitForStatus(`${stack.services.edge.baseUrl}/readyz`, 200, 60_000);
    sent.outcomes.push(await attempt());
  }
}

export async function runRound(
  stack: FaultStack,
  scenario: string,
  plan: RoundPlan,
  tally: Tally,
): Promise<void> {
  await ensureUp(stack);
  const { rows } = await stack.sql.query<{ now: Date }>('SELECT now() AS now');
  const since = rows[0]!.now;
  const round = randomBytes(3).toString('hex');
  const sent: Sent[] = stack.lanes.map((lane) => ({
    id: `${scenario}.${round}.${lane.index}`,
    lane,
    outcomes: [],
    async: plan.request('probe', lane).async === true,
  }));
  await Promise.all([
    Promise.all(sent.map((request) => sendOne(stack, plan, request))),
    plan.fault(stack),
  ]);
  await ensureUp(stack);
  await checkRound(stack, since, sent, tally);
}

/** Native async jobs whose webhooks go to the suite's receiver. */
export const asyncRequest =
  (stack: FaultStack) =>
  (id: string): RequestPlan => ({
    path: asyncPath,
    body: asyncBody(id, stack.webhookUrl(id)),
    async: true,
  });

const run = promisify(execFile);

/** Edge's local ports of its established connections to the broker (from `ss`). */
async function edgeAmqpPorts(stack: FaultStack): Promise<string[]> {
  const pid = stack.services.edge.pid;
  const dport = `dport = :${stack.infra.rabbitmq.port}`;
  const { stdout } = await run('ss', ['-tnpH', 'state', 'established', dport]);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .flatMap((line) => line.trim().split(/\s+/)[2]?.split(':').pop() ?? []);
}

/**
 * Cuts edge's AMQP connection(s) at once, as a network blip would: `ss -K` destroys edge's
 * sockets (both ends see a reset; the broker drops edge's exclusive reply queue). Where the
 * kernel cannot destroy sockets, the broker closes them (`rabbitmqctl close_connection`, whose
 * CLI takes about a second to start: the cut then lands later).
 */
export async function cutEdgeConnections(stack: FaultStack): Promise<number> {
  const ports = await edgeAmqpPorts(stack);
  const dport = `dport = :${stack.infra.rabbitmq.port}`;
  let cut = 0;
  for (const port of ports) {
    const args = ['-K', '-tnH', 'state', 'established', `sport = :${port}`, dport];
    await run('ss', args).catch(() => undefined);
  }
  const left = await edgeAmqpPorts(stack);
  cut += ports.filter((port) => !left.includes(port)).length;
  if (left.length === 0) return cut;
  const listing = await stack.infra.rabbitmq.ctl('list_connections', '-q', 'pid', 'peer_port');
  for (const line of listing.split('\n')) {
    const [connection, peerPort] = line.trim().split(/\s+/);
    if (connection === undefined || !left.includes(peerPort ?? '')) continue;
    await stack.infra.rabbitmq.ctl('close_connection', connection, 'fault suite');
    cut += 1;
  }
  return cut;
}
