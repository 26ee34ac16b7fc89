import fc from 'fast-check';
import { waitForStatus } from '@gateway/testing';
import {
  asyncPath,
  asyncBody,
  chatBody,
  marked,
  send,
  streamBody,
  type ClientOutcome,
  type Leave,
} from '../faults/fault-client.js';
import type { FaultStack, Service } from '../faults/fault-stack.js';
import { EMBEDDING_MODEL, type Customer } from './customers.js';

/*
 * The nemesis's open-loop workload: operations start at a fixed rate whether or not earlier
 * ones ended (as independent clients do), each of a kind drawn from the seed, each against one
 * of the two edges in turn. Every operation is recorded in the history: when it was invoked,
 * each attempt's outcome, when it completed.
 */

export const OPERATION_KINDS = [
  'chat',
  'chat-retry',
  'stream',
  'stream-leave',
  'async',
  'embeddings',
  'limited-key',
  'poor-account',
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/** Relative weights of the kinds in the mix. */
const WEIGHTS: Record<OperationKind, number> = {
  chat: 20,
  'chat-retry': 15,
  stream: 15,
  'stream-leave': 10,
  async: 15,
  embeddings: 10,
  'limited-key': 10,
  'poor-account': 5,
};

export interface Attempt {
  edge: string;
  startMs: number;
  endMs: number;
  outcome: ClientOutcome;
}

/** One client operation: a logical request, its first try and any retry. */
export interface Operation {
  /** Also its `X-Request-Id` (so its holds carry it) and its prompt's marker. */
  id: string;
  kind: OperationKind;
  customer: Customer;
  invokedMs: number;
  completedMs?: number;
  attempts: Attempt[];
}

interface Request {
  path: string;
  body: unknown;
  leave?: Leave;
  idempotencyKey?: string;
}

function requestFor(op: Operation, webhookUrl: (id: string) => string): Request {
  switch (op.kind) {
    case 'stream':
      return { path: '/v1/chat/completions', body: streamBody(op.id) };
    case 'stream-leave':
      return { path: '/v1/chat/completions', body: streamBody(op.id), leave: { afterChunks: 3 } };
    case 'async':
      return { path: asyncPath, body: asyncBody(op.id, webhookUrl(op.id)) };
    case 'embeddings':
      return { path: '/v1/embeddings', body: { model: EMBEDDING_MODEL, input: marked(op.id) } };
    case 'chat-retry':
      return { path: '/v1/chat/completions', body: chatBody(op.id), idempotencyKey: op.id };
    default:
      return { path: '/v1/chat/completions', body: chatBody(op.id) };
  }
}

/**
 * A chat-retry client retries as the `openai` SDK does by default: at most 2 retries, with
 * backoff, after a cut connection, 408, 409 (the key still in progress), 429 or a 5xx.
 */
const MAX_RETRIES = 2;
const retryBackoffMs = (retry: number) => Math.min(500 * 2 ** (retry - 1), 8_000);
const retryable = (outcome: ClientOutcome) =>
  outcome.kind === 'cut' ||
  (outcome.kind === 'error' && [408, 409, 429].includes(outcome.status)) ||
  (outcome.kind === 'error' && outcome.status >= 500);

/** Waits (bounded) until one of the edges answers ready; the one that does. */
async function readyEdge(edges: Service[], preferred: number): Promise<Service> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (let turn = 0; turn < edges.length; turn += 1) {
      const edge = edges[(preferred + turn) % edges.length]!;
      const ready = await waitForStatus(`${edge.baseUrl}/readyz`, 200, 1_000)
        .then(() => true)
        .catch(() => false);
      if (ready) return edge;
    }
    if (Date.now() > deadline) return edges[preferred % edges.length]!;
  }
}

export interface WorkloadOptions {
  stack: FaultStack;
  customers: { plain: Customer[]; limited: Customer[]; poor: Customer[] };
  seed: number;
  ratePerSecond: number;
  durationMs: number;
  t0Ms: number;
  webhookUrl(id: string): string;
  /** Called once per asynchronous operation before it is sent. */
  onAsync(id: string): void;
}

/** The kinds of the run's operations, from the seed. */
export function planOperations(seed: number, count: number): OperationKind[] {
  const weighted = fc.oneof(
    ...OPERATION_KINDS.map((kind) => ({ arbitrary: fc.constant(kind), weight: WEIGHTS[kind] })),
  );
  return fc.sample(fc.noBias(fc.array(weighted, { minLength: count, maxLength: count })), {
    seed: seed + 1,
    numRuns: 1,
  })[0]!;
}

async function runOperation(options: WorkloadOptions, op: Operation, index: number) {
  const { stack } = options;
  const now = () => Date.now() - options.t0Ms;
  const request = requestFor(op, options.webhookUrl);
  const attempt = async (edge: Service) => {
    const startMs = now();
    const outcome = await send({
      port: edge.port,
      apiKey: op.customer.apiKey,
      path: request.path,
      body: request.body,
      requestId: op.id,
      ...(request.leave && { leave: request.leave }),
      ...(request.idempotencyKey && { idempotencyKey: request.idempotencyKey }),
    });
    op.attempts.push({ edge: edge.label, startMs, endMs: now(), outcome });
    return outcome;
  };
  let outcome = await attempt(stack.edges[index % stack.edges.length]!);
  for (let retry = 1; op.kind === 'chat-retry' && retry <= MAX_RETRIES; retry += 1) {
    if (!retryable(outcome)) break;
    await new Promise((resolve) => setTimeout(resolve, retryBackoffMs(retry)));
    // Once the gateway answers again: the other edge, if it is up.
    outcome = await attempt(await readyEdge(stack.edges, index + retry));
  }
  op.completedMs = now();
}

function customerFor(options: WorkloadOptions, kind: OperationKind, index: number): Customer {
  const { plain, limited, poor } = options.customers;
  const from = (list: Customer[]) => list[index % list.length]!;
  if (kind === 'limited-key') return from(limited);
  if (kind === 'poor-account') return from(poor);
  return from(plain);
}

/** Runs the workload for its duration; resolves with every operation once all have ended. */
export async function runWorkload(options: WorkloadOptions): Promise<Operation[]> {
  const intervalMs = 1_000 / options.ratePerSecond;
  const count = Math.floor((options.durationMs / 1_000) * options.ratePerSecond);
  const kinds = planOperations(options.seed, count);
  const operations: Operation[] = [];
  const running: Promise<void>[] = [];
  for (const [index, kind] of kinds.entries()) {
    const wait = options.t0Ms + index * intervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const op: Operation = {
      id: `nem${options.seed}.${index}`,
      kind,
      customer: customerFor(options, kind, index),
      invokedMs: Date.now() - options.t0Ms,
      attempts: [],
    };
    if (kind === 'async') options.onAsync(op.id);
    operations.push(op);
    running.push(runOperation(options, op, index));
  }
  await Promise.all(running);
  return operations;
}
