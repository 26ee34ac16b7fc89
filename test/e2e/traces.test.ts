import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startReceiver,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import {
  createTestCertificates,
  type TestCertificates,
} from '../../services/dispatcher/src/testing/test-ca.suite.js';
import {
  CHAT_MODEL,
  NATIVE_MODEL,
  startAbuseStack,
  type AbuseStack,
} from '../abuse/abuse-stack.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { waitFor } from '@gateway/testing';

/*
 * One connected trace per request across the processes. Edge, billing, the
 * worker and the dispatcher run as the deployment runs them (a process each, RabbitMQ between
 * them) with tracing turned on by the standard variables, exporting OTLP/HTTP to a collector
 * stand-in; a stand-in model node records the `traceparent` the worker sent it.
 */

const TRACE_WAIT_MS = 15_000;

let collector: OtlpReceiver;
let certs: TestCertificates;
let hooks: Receiver;
let stack: AbuseStack;

beforeAll(async () => {
  collector = await startOtlpReceiver();
  certs = createTestCertificates();
  hooks = await startReceiver(certs);
  stack = await startAbuseStack({
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    dispatcherEnv: {
      DISPATCH_INTERVAL_MS: '50',
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: certs.caFile,
    },
    // The receiver is on loopback: edge accepts the URL with the development setting too.
    edgeEnv: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' },
  });
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await hooks?.close();
  certs?.remove();
  await collector?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function clientTraceparent(): { traceparent: string; traceId: string; parentId: string } {
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceparent: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

const spansOf = (traceId: string) => collector.spans().filter((s) => s.traceId === traceId);

/** Waits until the trace has a span matching each of `wanted`; returns the trace's spans. */
async function traceWith(
  traceId: string,
  wanted: ((span: ReceivedSpan) => boolean)[],
): Promise<ReceivedSpan[]> {
  await waitFor(
    () => (wanted.every((want) => spansOf(traceId).some(want)) ? true : undefined),
    TRACE_WAIT_MS,
    `the spans of trace ${traceId}`,
  );
  return spansOf(traceId);
}

const is =
  (service: string, kind: ReceivedSpan['kind'], name?: string | RegExp) => (span: ReceivedSpan) =>
    span.service === service &&
    span.kind === kind &&
    (name === undefined || (typeof name === 'string' ? span.name === name : name.test(span.name)));

const one = (spans: ReceivedSpan[], want: (span: ReceivedSpan) => boolean): ReceivedSpan => {
  const found = spans.filter(want);
  expect(found).toHaveLength(1);
  return found[0]!;
};

/** Every span's parent is in the trace, except the root's, which is `rootParent` (or none). */
function expectConnected(spans: ReceivedSpan[], rootParent: string): void {
  const ids = new Set(spans.map((span) => span.spanId));
  const orphans = spans.filter((span) => !ids.has(span.parentSpanId));
  expect(orphans.map((span) => [span.service, span.name, span.parentSpanId])).toEqual([
    ['edge', expect.stringMatching(/^POST \/v1\//), rootParent],
  ]);
}

/**
 * The chat path's spans: edge → billing's database, edge → worker (directly, ADR 0072) → node and
 * → billing's database.
 */
const CHAT_PATH = [
  is('edge', 'server', 'POST /v1/chat/completions'),
  // Edge admits the API key in billing's database itself (ADR 0070).
  is('edge', 'client', 'ledger admit'),
  // Edge hands the job to the worker over HTTP; the worker's span of it is that call's child.
  is('edge', 'client', 'hand job to worker'),
  is('inference-worker', 'server', 'process direct job'),
  is('inference-worker', 'client', /node/),
  // The worker settles in billing's database itself (ADR 0070).
  is('inference-worker', 'client', 'ledger settle'),
];

function expectNodeChildOfWorker(spans: ReceivedSpan[], traceId: string, marker: string): void {
  const nodeCall = one(spans, is('inference-worker', 'client', /node/));
  const job = one(spans, is('inference-worker', 'server', 'process direct job'));
  const handOver = one(spans, is('edge', 'client', 'hand job to worker'));
  // The worker's job span continues edge's call; its node call is that span's descendant.
  expect(job.parentSpanId).toBe(handOver.spanId);
  const seen = stack.node.requests().filter((r) => JSON.stringify(r.body).includes(marker));
  expect(seen).toHaveLength(1);
  // What the node got: the same trace, with the worker's node-call span as the parent.
  expect(seen[0]!.headers.traceparent).toBe(`00-${traceId}-${nodeCall.spanId}-01`);
}

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${stack.edgeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${stack.apiKey}`,
      'Content-Type': 'application/json',
      ...headers,
    },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 8, ...body }),
  });
}

describe('one trace per request across edge, billing, the worker, the node and the dispatcher', () => {
  it("continues the client's traceparent through a chat completion", async () => {
    const client = clientTraceparent();
    const marker = `[[req:trace-plain-${hex(4)}]]`;
    const response = await chat(
      { messages: [{ role: 'user', content: `Hello ${marker}` }] },
      { traceparent: client.traceparent },
    );
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    await response.json();

    const spans = await traceWith(client.traceId, CHAT_PATH);
    expectConnected(spans, client.parentId);
    // Admission and settlement are calls of billing's functions in its database; billing's API
    // still serves the worker's catalog reads (cached) and publish marks, when a request needs
    // them.
    expect([...new Set(spans.map((s) => s.service))].sort()).toEqual(
      expect.arrayContaining(['edge', 'inference-worker']),
    );
    const server = one(spans, is('edge', 'server'));
    expect(server.attributes['http.response.status_code']).toBe(200);
    expect(server.attributes['gateway.request_id']).toBe(requestId);
    // Billing's spans, if any, are children of edge's and the worker's calls to it.
    const clientSpanIds = new Set(spans.filter((s) => s.kind === 'client').map((s) => s.spanId));
    for (const span of spans.filter(is('billing', 'server'))) {
      expect(clientSpanIds.has(span.parentSpanId)).toBe(true);
    }
    expectNodeChildOfWorker(spans, client.traceId, marker);

    // Log lines written inside the request carry its trace id.
    const access = await waitFor(
      () =>
        stack.processes.edge.logs.find(
          (line) => (line.req as { id?: string } | undefined)?.id === requestId,
        ),
      5_000,
      "edge's access line",
    );
    expect(access.trace_id).toBe(client.traceId);
  });

  it('traces a streamed chat completion the same way', async () => {
    const client = clientTraceparent();
    const marker = `[[req:trace-stream-${hex(4)}]]`;
    const response = await chat(
      { stream: true, messages: [{ role: 'user', content: `Hello ${marker}` }] },
      { traceparent: client.traceparent },
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('data: [DONE]');

    const spans = await traceWith(client.traceId, CHAT_PATH);
    expectConnected(spans, client.parentId);
    expectNodeChildOfWorker(spans, client.traceId, marker);
  });

  it('starts a new trace when the client sends none, and one trace per request', async () => {
    const answers = await Promise.all(
      [1, 2].map(() => chat({ messages: [{ role: 'user', content: 'Hello' }] })),
    );
    const requestIds = answers.map((answer) => answer.headers.get('x-request-id'));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    await Promise.all(answers.map((answer) => answer.json()));

    const roots = await waitFor(
      () => {
        const found = requestIds.map((id) =>
          collector
            .spans()
            .find((s) => is('edge', 'server')(s) && s.attributes['gateway.request_id'] === id),
        );
        return found.every(Boolean) ? (found as ReceivedSpan[]) : undefined;
      },
      TRACE_WAIT_MS,
      "edge's server spans",
    );
    expect(new Set(roots.map((root) => root.traceId)).size).toBe(2);
    for (const root of roots) {
      expect(root.parentSpanId).toBe('');
      const spans = await traceWith(root.traceId, CHAT_PATH);
      expectConnected(spans, '');
    }
  });

  it("carries the trace to the dispatcher's webhook, without sending it to the customer", async () => {
    const client = clientTraceparent();
    const hookPath = `/hook-${hex(4)}`;
    const response = await fetch(`${stack.edgeUrl}/v1/inference/${NATIVE_MODEL}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${stack.apiKey}`,
        'Content-Type': 'application/json',
        traceparent: client.traceparent,
      },
      body: JSON.stringify({
        input: 'Tell me about the Sahara.',
        parameters: { max_new_tokens: 8 },
        webhook: `https://127.0.0.1:${hooks.port}${hookPath}`,
      }),
    });
    expect(response.status).toBe(200);

    const spans = await traceWith(client.traceId, [
      is('edge', 'server', /^POST \/v1\/inference\//),
      is('inference-worker', 'client', /node/),
      is('dispatcher', 'consumer'),
      is('dispatcher', 'client', 'POST webhook'),
    ]);
    expectConnected(spans, client.parentId);
    const intake = one(spans, is('dispatcher', 'consumer'));
    const attempt = one(spans, is('dispatcher', 'client', 'POST webhook'));
    expect(attempt.parentSpanId).toBe(intake.spanId);
    expect(attempt.attributes['webhook.outcome']).toBe('delivered');
    const delivered = hooks.requestsTo(hookPath);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.headers.traceparent).toBeUndefined();
  });
});
