import { afterEach, describe, expect, it } from '@jest/globals';
import type { InferenceReplyPayload } from '@gateway/contracts';
import { countTextTokens } from '@gateway/tokenizer';
import { waitFor } from '@gateway/testing';
import {
  chatModel,
  expectedCost,
  streamedText,
  useWorkerFixture,
} from '../testing/worker-fixture.suite.js';

/*
 * A job's deadline bounds its wait in the queue, not its generation;
 * a cancelled job is charged the input the node processed and every kind of output it produced.
 */

const messages = [{ role: 'user', content: 'Describe the Tassili n’Ajjer.' }];
const GENERATION_CAP_MS = 9_000;
const tools = [{ type: 'function', function: { name: 'lookup_oasis', parameters: {} } }];

/** Tool-call text of relayed chunks: the function's name and its arguments, as they streamed. */
function toolCallText(chunks: InferenceReplyPayload[]): string {
  return chunks
    .flatMap((chunk) => (chunk.data as { choices?: unknown[] }).choices ?? [])
    .flatMap((choice) => (choice as { delta?: { tool_calls?: unknown[] } }).delta?.tool_calls ?? [])
    .map((call) => {
      const fn = (call as { function?: { name?: string; arguments?: string } }).function;
      return (fn?.name ?? '') + (fn?.arguments ?? '');
    })
    .join('');
}

describe('worker: long streams and cancelled streams are billed for what was produced', () => {
  const f = useWorkerFixture({ timeouts: { idleMs: 5_000, generationMs: GENERATION_CAP_MS } });
  afterEach(() => {
    f.node.setOptions({
      tokensPerSecond: 0,
      firstTokenLatencyMs: 0,
      answerTokensMin: 30,
      answerTokensMax: 60,
    });
  });

  async function publishStream(request: Record<string, unknown> = {}, deadlineInMs = 60_000) {
    await f.putModel('acme/long', chatModel([f.node.url]));
    const holdId = await f.hold('acme/long');
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model: 'acme/long',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      stream: true,
      promptTokens: 20,
      deadlineAtMs: Date.now() + deadlineInMs,
      request: { model: 'acme/long', messages, stream: true, ...request },
    });
    return { holdId, jobId };
  }

  it('delivers and charges a slow stream that runs past its deadline (the deadline bounds queue wait)', async () => {
    // 1 token / 300 ms for 15 tokens: about 4.5 s, past a 2 s deadline.
    f.node.setOptions({ tokensPerSecond: 3, answerTokensMin: 15, answerTokensMax: 15 });
    const { holdId, jobId } = await publishStream({}, 2_000);
    const { end, chunks } = await f.client.waitForEnd(jobId, 20_000);
    expect(end).toMatchObject({ type: 'final' });
    expect(countTextTokens(streamedText(chunks))).toBe(15);
    const hold = await f.billing.hold(holdId);
    expect(hold).toMatchObject({ status: 'settled', settled: expectedCost(end.usage!) });
    expect(end.usage!.completionTokens).toBe(15);
  }, 30_000);

  it('stops a generation at the overall cap and charges what was produced', async () => {
    f.node.setOptions({ tokensPerSecond: 5, answerTokensMin: 200, answerTokensMax: 200 });
    const startedMs = Date.now();
    const { holdId, jobId } = await publishStream();
    const { end, chunks } = await f.client.waitForEnd(jobId, 30_000);
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(GENERATION_CAP_MS - 500);
    expect(end).toMatchObject({ type: 'error', error: { code: 'GATEWAY_TIMEOUT' } });
    const relayedTokens = countTextTokens(streamedText(chunks));
    expect(relayedTokens).toBeGreaterThan(10);
    expect(relayedTokens).toBeLessThan(200);
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost({ promptTokens: 20, completionTokens: relayedTokens }),
    });
  }, 40_000);

  it('charges the tool-call deltas relayed before a client disconnect', async () => {
    f.node.setOptions({ tokensPerSecond: 20, answerTokensMin: 200, answerTokensMax: 200 });
    const toolChoice = { type: 'function', function: { name: 'lookup_oasis' } };
    const { holdId, jobId } = await publishStream({ tools, tool_choice: toolChoice });
    await waitFor(() => f.client.repliesOf(jobId).length >= 6 || undefined, 10_000, '6 chunks');
    await f.client.cancel(jobId);
    const { end, chunks } = await f.client.waitForEnd(jobId);
    expect(end).toMatchObject({ type: 'error' });
    expect(streamedText(chunks)).toBe('');
    const toolTokens = countTextTokens(toolCallText(chunks));
    expect(toolTokens).toBeGreaterThan(5);
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost({ promptTokens: 20, completionTokens: toolTokens }),
    });
  });

  it('charges the prompt of a job cancelled after the node accepted it, before any output', async () => {
    f.node.setOptions({ firstTokenLatencyMs: 3_000 });
    const requestsBefore = f.node.requests().length;
    const { holdId, jobId } = await publishStream();
    // The node answered 200 and sent its headers and the role-only opening chunk at once; the
    // worker holds that chunk back until the first output, 3 s later.
    await waitFor(
      () => f.node.requests().length > requestsBefore || undefined,
      5_000,
      'node request',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(f.client.repliesOf(jobId)).toEqual([]);
    await f.client.cancel(jobId);
    const { end, chunks } = await f.client.waitForEnd(jobId);
    expect(end).toMatchObject({ type: 'error' });
    expect(streamedText(chunks)).toBe('');
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost({ promptTokens: 20, completionTokens: 0 }),
    });
  });

  it("sends a stream's opening chunk (no output yet) only merged into its first output", async () => {
    f.node.setOptions({ firstTokenLatencyMs: 1_500 });
    const { jobId } = await publishStream();
    const firstReplyAt = waitFor(
      () => f.client.repliesOf(jobId)[0] && Date.now(),
      10_000,
      'first reply',
    );
    const sentAtMs = Date.now();
    const { chunks } = await f.client.waitForEnd(jobId);
    // Nothing reached edge before the first token: an edge that dies, or a run replaced, in
    // the meantime leaves its client nothing that could be charged.
    expect((await firstReplyAt) - sentAtMs).toBeGreaterThanOrEqual(1_000);
    // One reply: no edge can relay the opening (the role) without the output.
    const [first] = chunks;
    const data = first?.data as { choices: { delta: Record<string, unknown> }[] };
    expect(data.choices[0]!.delta.role).toBe('assistant');
    expect(streamedText([first!])).not.toBe('');
  });

  it('voids the hold of a job cancelled before any node accepted it', async () => {
    f.node.setFault({ kind: 'timeout' });
    try {
      const { holdId, jobId } = await publishStream();
      await waitFor(() => f.node.requests().length > 0 || undefined, 5_000, 'node request');
      await f.client.cancel(jobId);
      const { end } = await f.client.waitForEnd(jobId);
      expect(end).toMatchObject({ type: 'error' });
      expect((await f.billing.hold(holdId)).status).toBe('voided');
    } finally {
      f.node.clearFault();
    }
  });
});
