import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import { countTextTokens } from '@gateway/tokenizer';
import { waitFor } from '@gateway/testing';
import {
  chatModel,
  contentOf,
  expectedCost,
  streamedText,
  useWorkerFixture,
} from '../testing/worker-fixture.suite.js';

const chatCalls = (node: StandInModelNode) => node.stats().byPath['/v1/chat/completions'] ?? 0;
const messages = [{ role: 'user', content: 'Describe the Hoggar mountains.' }];

describe('worker: node failover, faults and cancellation', () => {
  const f = useWorkerFixture({ timeouts: { firstByteMs: 2_000, idleMs: 2_000 } });
  const extra: StandInModelNode[] = [];
  // The first job of a cold worker and a cold stand-in once took longer than the
  // first-byte timeout on a loaded machine, so the first failover case ended in an error. One
  // job through a healthy node warms both before any case; the cases then measure failover, not
  // start-up.
  beforeAll(async () => {
    const node = await secondNode();
    await f.putModel('acme/warm-up', chatModel([node.url]));
    expect((await runChat('acme/warm-up')).end.type).toBe('final');
  });
  afterEach(async () => {
    f.node.clearFault();
    f.node.setOptions({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
    await Promise.all(extra.splice(0).map((node) => node.close()));
    // Let the worker's health checks see the node healthy again before the next test.
    await new Promise((resolve) => setTimeout(resolve, 250));
  });

  async function secondNode(): Promise<StandInModelNode> {
    const node = await createStandInModelNode({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
    extra.push(node);
    return node;
  }

  async function runChat(model: string, request: Record<string, unknown> = {}) {
    const holdId = await f.hold(model);
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model,
      modelKind: 'chat',
      endpoint: 'chat.completions',
      stream: request.stream === true,
      request: { model, messages, ...request },
    });
    return { holdId, jobId, ...(await f.client.waitForEnd(jobId)) };
  }

  it.each([
    ['answers 500', { kind: 'status', status: 500 } as const],
    ['answers 503', { kind: 'status', status: 503 } as const],
    ['never answers (timeout)', { kind: 'timeout' } as const],
    ['answers garbage', { kind: 'garbage' } as const],
  ])('fails over to another node when the first %s', async (_name, fault) => {
    const healthy = await secondNode();
    f.node.setFault(fault);
    // The faulty node is listed first and both are idle: it is tried first.
    await f.putModel('acme/pair', chatModel([f.node.url, healthy.url]));
    const before = chatCalls(healthy);
    const { end, holdId } = await runChat('acme/pair');
    expect(end.type).toBe('final');
    expect(chatCalls(healthy)).toBe(before + 1);
    expect((await f.billing.hold(holdId)).status).toBe('settled');
  });

  it('fails over when a node refuses connections', async () => {
    const healthy = await secondNode();
    const dead = await createStandInModelNode();
    await dead.close();
    await f.putModel('acme/pair', chatModel([dead.url, healthy.url]));
    const { end } = await runChat('acme/pair');
    expect(end.error).toBeUndefined();
    expect(end.type).toBe('final');
  });

  it('answers GATEWAY_TIMEOUT and voids the hold when every node is down', async () => {
    const dead = await createStandInModelNode();
    await dead.close();
    f.node.setFault({ kind: 'status', status: 502 });
    await f.putModel('acme/down', chatModel([dead.url, f.node.url]));
    const { end, holdId } = await runChat('acme/down');
    expect(end).toMatchObject({ type: 'error', error: { code: 'GATEWAY_TIMEOUT' } });
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });

  it('maps 429 from every node to rate_limit_exceeded (model at capacity)', async () => {
    const other = await secondNode();
    f.node.setFault({ kind: 'status', status: 429, retryAfterS: 2 });
    other.setFault({ kind: 'status', status: 429 });
    await f.putModel('acme/busy', chatModel([f.node.url, other.url]));
    const { end, holdId } = await runChat('acme/busy');
    expect(end).toMatchObject({ type: 'error', error: { code: 'rate_limit_exceeded' } });
    expect(end.error!.message).toMatch(/capacity/);
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });

  it('does not restart a stream on another node once chunks were relayed; the hold is voided', async () => {
    const other = await secondNode();
    f.node.setFault({ kind: 'drop-mid-stream', afterTokens: 3 });
    await f.putModel('acme/drop', chatModel([f.node.url, other.url]));
    const before = chatCalls(other);
    const { end, chunks, holdId } = await runChat('acme/drop', { stream: true });
    expect(chunks.length).toBeGreaterThan(0);
    expect(end).toMatchObject({ type: 'error', error: { code: 'GATEWAY_TIMEOUT' } });
    expect(chatCalls(other)).toBe(before);
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });

  it('aborts the upstream within 1 s of a cancel and charges only the tokens relayed', async () => {
    f.node.setOptions({ tokensPerSecond: 20, answerTokensMin: 200, answerTokensMax: 200 });
    await f.putModel('acme/slow', chatModel([f.node.url]));
    const holdId = await f.hold('acme/slow');
    const abortsBefore = f.node.stats().aborted;
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model: 'acme/slow',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      stream: true,
      promptTokens: 20,
      request: { model: 'acme/slow', messages, stream: true },
    });
    await waitFor(() => f.client.repliesOf(jobId).length >= 5 || undefined, 10_000, '5 chunks');
    const cancelledAtMs = Date.now();
    await f.client.cancel(jobId);
    await waitFor(
      () => f.node.stats().aborted > abortsBefore || undefined,
      2_000,
      'upstream abort',
    );
    expect(f.node.stats().lastAbort!.atMs - cancelledAtMs).toBeLessThan(1_000);
    const { end, chunks } = await f.client.waitForEnd(jobId);
    expect(end).toMatchObject({ type: 'error' });
    const relayedTokens = countTextTokens(streamedText(chunks));
    expect(relayedTokens).toBeGreaterThan(0);
    expect(relayedTokens).toBeLessThan(200);
    const hold = await f.billing.hold(holdId);
    expect(hold).toMatchObject({
      status: 'settled',
      settled: expectedCost({ promptTokens: 20, completionTokens: relayedTokens }),
    });
    expect(hold.settled!).toBeLessThan(hold.amount);
  });

  it('serves priority jobs ahead of a backlog of default jobs on a slow node', async () => {
    f.node.setOptions({
      firstTokenLatencyMs: 500,
      tokensPerSecond: 0,
      answerTokensMin: 5,
      answerTokensMax: 5,
    });
    await f.putModel('acme/queue', chatModel([f.node.url]));
    const holds = await Promise.all(Array.from({ length: 50 }, () => f.hold('acme/queue')));
    const urgentHold = await f.hold('acme/queue', { priority: true });
    const job = async (priority: boolean, holdId: string) =>
      f.client.publish({
        accountId: f.account.accountId,
        holdId,
        model: 'acme/queue',
        modelKind: 'chat',
        endpoint: 'chat.completions',
        serviceTier: priority ? 'priority' : 'default',
        request: { model: 'acme/queue', messages },
      });
    const backlog: string[] = [];
    for (const holdId of holds) backlog.push(await job(false, holdId));
    const finished = () =>
      backlog.filter((id) => f.client.repliesOf(id).some((r) => r.type !== 'chunk')).length;
    // On a busy machine some of the backlog may finish while it is still being published.
    const finishedAtPublish = finished();
    const urgent = await job(true, urgentHold);
    await f.client.waitForEnd(urgent, 20_000);
    // 8 default slots were busy when it arrived: at most those (and a few more) finished first.
    expect(finished() - finishedAtPublish).toBeLessThanOrEqual(16);
    await Promise.all(backlog.map((id) => f.client.waitForEnd(id, 30_000)));
    expect(contentOf((await f.client.waitForEnd(urgent)).end.data).length).toBeGreaterThan(0);
  }, 60_000);
});
