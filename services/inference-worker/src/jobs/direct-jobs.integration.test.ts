import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import {
  makeEnvelope,
  parseEnvelope,
  WORKER_JOBS_PATH,
  WORKER_REPLIES_CONTENT_TYPE,
  type InferenceJobPayload,
  type InferenceReplyPayload,
} from '@gateway/contracts';
import { countTextTokens } from '@gateway/tokenizer';
import { waitFor } from '@gateway/testing';
import {
  chatModel,
  contentOf,
  expectedCost,
  streamedText,
  useWorkerFixture,
} from '../testing/worker-fixture.suite.js';
import { DIRECT_JOBS_TOKEN } from '../testing/worker-harness.suite.js';

/*
 * Synchronous jobs edge hands over on HTTP (ADR 0072): the worker takes one only while it has a
 * free slot (else edge queues it), answers its replies as lines, settles as the queue path does,
 * and treats edge closing the connection as its client going away.
 */

const f = useWorkerFixture({ direct: { maxInFlight: 1, perConnection: 2 } });
const messages = [{ role: 'user', content: 'Name three oases.' }];

interface Call {
  status: number;
  contentType: string | undefined;
  /** The answer's `Connection` header, and the connection it came on. */
  connection: string | undefined;
  socket: Socket;
  replies: InferenceReplyPayload[];
  ended: Promise<void>;
  request: ClientRequest;
}

/** POSTs `body` to the direct job API; resolves once the answer's headers came. */
function post(
  body: unknown,
  token = DIRECT_JOBS_TOKEN,
  acceptByMs = Date.now() + 1_000,
  agent?: Agent,
): Promise<Call> {
  return new Promise((resolve, reject) => {
    const url = new URL(WORKER_JOBS_PATH, f.directUrl);
    const request = httpRequest(url, {
      method: 'POST',
      ...(agent === undefined ? {} : { agent }),
      headers: {
        'content-type': 'application/json',
        'x-internal-token': token,
        'x-accept-by-ms': String(acceptByMs),
      },
    });
    request.on('error', reject);
    request.on('response', (response: IncomingMessage) => {
      const replies: InferenceReplyPayload[] = [];
      let pending = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        pending += text;
        for (let at = pending.indexOf('\n'); at !== -1; at = pending.indexOf('\n')) {
          replies.push(parseEnvelope('inference.reply', pending.slice(0, at)).payload);
          pending = pending.slice(at + 1);
        }
      });
      const ended = new Promise<void>((done) => {
        response.on('end', done);
        response.on('close', done);
      });
      resolve({
        status: response.statusCode ?? 0,
        contentType: response.headers['content-type'],
        connection: response.headers.connection,
        socket: response.socket,
        replies,
        ended,
        request,
      });
    });
    request.end(JSON.stringify(body));
  });
}

async function chatJob(model: string, stream = false): Promise<InferenceJobPayload> {
  await f.putModel(model, chatModel([f.node.url]));
  const holdId = await f.hold(model);
  return {
    jobId: `chatcmpl-${randomUUID()}`,
    accountId: f.account.accountId,
    holdId,
    model,
    modelKind: 'chat',
    endpoint: 'chat.completions',
    serviceTier: 'default',
    stream,
    promptTokens: 20,
    deadlineAtMs: Date.now() + 60_000,
    request: { model, messages, ...(stream ? { stream: true } : {}) },
  };
}

const modelCalls = () =>
  f.node.requests().filter((request) => request.path.endsWith('/chat/completions')).length;

describe('worker: synchronous jobs handed over directly', () => {
  afterEach(() => {
    f.node.setOptions({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
  });

  it('answers a job as reply lines and settles its hold, as the queue path does', async () => {
    const job = await chatJob('acme/direct');
    const call = await post(makeEnvelope('inference.job', job));
    expect(call.status).toBe(200);
    expect(call.contentType).toBe(WORKER_REPLIES_CONTENT_TYPE);
    await call.ended;
    expect(call.replies).toHaveLength(1);
    const [final] = call.replies;
    expect(final).toMatchObject({ jobId: job.jobId, seq: 0, type: 'final' });
    expect(contentOf(final!.data)).not.toBe('');
    const cost = expectedCost(final!.usage!);
    expect(final!.costMicroDzd).toBe(cost.toString());
    expect(await f.billing.hold(job.holdId)).toMatchObject({ status: 'settled', settled: cost });
  });

  it('streams chunks in order, then the final reply', async () => {
    const job = await chatJob('acme/direct-stream', true);
    const call = await post(makeEnvelope('inference.job', job));
    await call.ended;
    const last = call.replies.at(-1)!;
    expect(last.type).toBe('final');
    expect(call.replies.map((reply) => reply.seq)).toEqual(call.replies.map((_, index) => index));
    expect(streamedText(call.replies.slice(0, -1))).not.toBe('');
    expect(await f.billing.hold(job.holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost(last.usage!),
    });
  });

  it('refuses a job past its free slots with 503, before calling a model; edge queues it', async () => {
    f.node.setOptions({ firstTokenLatencyMs: 1_500 });
    const callsBefore = modelCalls();
    const busy = await post(makeEnvelope('inference.job', await chatJob('acme/busy')));
    expect(busy.status).toBe(200);
    const refused = await post(makeEnvelope('inference.job', await chatJob('acme/busy')));
    expect(refused.status).toBe(503);
    await refused.ended;
    await busy.ended;
    // The one model call is the busy job's.
    expect(modelCalls()).toBe(callsBefore + 1);
    expect(busy.replies.at(-1)?.type).toBe('final');
  });

  it('closes a connection after its jobs per connection, so that edge connects anew', async () => {
    // A Service balances connections: a pod it adds gets direct jobs only over new ones.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const calls: Call[] = [];
      for (let i = 0; i < 3; i += 1) {
        const call = await post(
          makeEnvelope('inference.job', await chatJob('acme/renewed')),
          DIRECT_JOBS_TOKEN,
          Date.now() + 1_000,
          agent,
        );
        await call.ended;
        expect(call.status).toBe(200);
        expect(call.replies.at(-1)?.type).toBe('final');
        calls.push(call);
      }
      const [first, second, third] = calls;
      expect(first!.connection).toBe('keep-alive');
      expect(second!.socket).toBe(first!.socket);
      // The second job is the connection's last: its answer says so, and the third job comes
      // over a new connection.
      expect(second!.connection).toBe('close');
      expect(third!.socket).not.toBe(first!.socket);
    } finally {
      agent.destroy();
    }
  });

  it('refuses a wrong credential (401) and an async job (400) without running them', async () => {
    const callsBefore = modelCalls();
    const job = await chatJob('acme/refused');
    expect((await post(makeEnvelope('inference.job', job), 'x'.repeat(64))).status).toBe(401);
    const webhookJob = { ...job, webhookUrl: 'https://hooks.example/x' };
    expect((await post(makeEnvelope('inference.job', webhookJob))).status).toBe(400);
    expect((await post({ not: 'a job' })).status).toBe(400);
    expect(modelCalls()).toBe(callsBefore);
    expect((await f.billing.hold(job.holdId)).status).toBe('pending');
  });

  it('refuses a job it reads after its time to be taken (edge has queued it by then)', async () => {
    const callsBefore = modelCalls();
    const job = await chatJob('acme/too-late');
    const late = await post(makeEnvelope('inference.job', job), DIRECT_JOBS_TOKEN, Date.now() - 1);
    expect(late.status).toBe(503);
    await late.ended;
    expect(modelCalls()).toBe(callsBefore);
    expect((await f.billing.hold(job.holdId)).status).toBe('pending');
  });

  it('stops a stream whose edge closed the connection and charges only what was relayed', async () => {
    f.node.setOptions({ tokensPerSecond: 20, answerTokensMin: 200, answerTokensMax: 200 });
    const job = await chatJob('acme/direct-left', true);
    const call = await post(makeEnvelope('inference.job', job));
    await waitFor(() => call.replies.length >= 5 || undefined, 10_000, '5 chunks');
    call.request.destroy();
    await waitFor(
      async () => (await f.billing.hold(job.holdId)).status !== 'pending' || undefined,
      10_000,
      'the hold settled',
    );
    const hold = await f.billing.hold(job.holdId);
    const relayedTokens = countTextTokens(streamedText(call.replies));
    // Every chunk written before the close counts (the worker cannot know which were read).
    expect(hold.status).toBe('settled');
    expect(hold.settled!).toBeGreaterThanOrEqual(
      expectedCost({ promptTokens: 20, completionTokens: relayedTokens }),
    );
    expect(hold.settled!).toBeLessThan(expectedCost({ promptTokens: 20, completionTokens: 200 }));
  });

  it('refunds a non-streamed answer whose edge went away before it: nobody could read it', async () => {
    f.node.setOptions({ firstTokenLatencyMs: 1_000 });
    const before = await f.billing.postedBalance(f.account.accountId);
    const job = await chatJob('acme/direct-orphan');
    const callsBefore = modelCalls();
    const call = await post(makeEnvelope('inference.job', job));
    await waitFor(() => modelCalls() > callsBefore || undefined, 5_000, 'the model call');
    // Edge died (no cancel came): the generation runs on, and its answer reaches nobody.
    call.request.destroy();
    await waitFor(() => f.billing.refunded(job.holdId), 15_000, 'the refund');
    expect((await f.billing.hold(job.holdId)).status).toBe('settled');
    expect(await f.billing.postedBalance(f.account.accountId)).toBe(before);
  });

  it('runs a job edge queued again after its direct run was lost only while its hold is pending', async () => {
    const finished = await chatJob('acme/requeued');
    await (
      await post(makeEnvelope('inference.job', finished))
    ).ended;
    const callsAfterFirstRun = modelCalls();
    // The lost run had settled: the queued copy makes no model call and no second charge.
    await f.client.publish({ ...finished, redelivery: true });
    const pending = await chatJob('acme/requeued');
    const rerun = await f.client.publish({ ...pending, redelivery: true });
    const { end } = await f.client.waitForEnd(rerun);
    expect(end.type).toBe('final');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(modelCalls()).toBe(callsAfterFirstRun + 1);
    expect(f.client.repliesOf(finished.jobId)).toEqual([]);
    expect((await f.billing.hold(pending.holdId)).status).toBe('settled');
  });
});
