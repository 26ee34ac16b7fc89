import { describe, expect, it } from '@jest/globals';
import { balanceMicroDzd } from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  chatModel,
  contentOf,
  expectedCost,
  finishOf,
  streamedText,
  useWorkerFixture,
} from '../testing/worker-fixture.suite.js';

const messages = [{ role: 'user', content: 'Tell me about the Sahara.' }];

describe('worker: chat completion jobs on model nodes', () => {
  const f = useWorkerFixture();

  it('runs a JSON chat job, settles the real usage and replies with the completion', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const before = await balanceMicroDzd(f.billing, f.account.accountId);
    const holdId = await f.hold('acme/chat');
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model: 'acme/chat',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: { model: 'acme/chat', messages, service_tier: 'default' },
    });
    const { chunks, end } = await f.client.waitForEnd(jobId);
    expect(chunks).toEqual([]);
    expect(end.type).toBe('final');
    const data = end.data as Record<string, unknown>;
    expect(data).toMatchObject({ id: jobId, object: 'chat.completion', model: 'acme/chat' });
    expect(contentOf(data).length).toBeGreaterThan(0);
    expect(finishOf(data)).toBe('stop');
    expect(data).not.toHaveProperty('_service');
    const usage = end.usage!;
    expect(data.usage).toMatchObject({
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
    });
    expect(usage.promptTokens).toBeGreaterThan(5);
    expect(end.warnings).toBeUndefined();
    const cost = expectedCost(usage);
    expect(BigInt(end.costMicroDzd!)).toBe(cost);
    expect(await f.billing.hold(holdId)).toMatchObject({ status: 'settled', settled: cost });
    expect(BigInt(end.balanceMicroDzd!)).toBe(before - cost);
    expect(await balanceMicroDzd(f.billing, f.account.accountId)).toBe(before - cost);
  });

  it('relays a stream chunk by chunk, in order, ending with the usage chunk', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const base = {
      accountId: f.account.accountId,
      model: 'acme/chat',
      modelKind: 'chat' as const,
      endpoint: 'chat.completions' as const,
    };
    const request = { model: 'acme/chat', messages };
    const json = await f.client.waitForEnd(
      await f.client.publish({ ...base, holdId: await f.hold('acme/chat'), request }),
    );
    const holdId = await f.hold('acme/chat');
    const jobId = await f.client.publish({
      ...base,
      holdId,
      stream: true,
      request: { ...request, stream: true },
    });
    const { chunks, end } = await f.client.waitForEnd(jobId);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_c, i) => i));
    expect(end.seq).toBe(chunks.length);
    for (const chunk of chunks) {
      expect(chunk.data).toMatchObject({
        id: jobId,
        object: 'chat.completion.chunk',
        model: 'acme/chat',
      });
      expect(chunk.data).not.toHaveProperty('usage');
    }
    expect(streamedText(chunks)).toBe(contentOf(json.end.data));
    expect(end.type).toBe('final');
    expect(end.data).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { completion_tokens: end.usage!.completionTokens },
    });
    expect(end.usage).toEqual(json.end.usage);
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost(end.usage!),
    });
  });

  it('caps output at the catalog max_output_tokens (finish_reason length), and the answer continues when the cut text is appended', async () => {
    await f.putModel('acme/chat-uncapped', chatModel([f.node.url]));
    await f.putModel('acme/chat-capped', chatModel([f.node.url], 8));
    const run = async (model: string, msgs: unknown[]) => {
      const jobId = await f.client.publish({
        accountId: f.account.accountId,
        holdId: await f.hold(model),
        model,
        modelKind: 'chat',
        endpoint: 'chat.completions',
        request: { model, messages: msgs, max_tokens: 5000 },
      });
      return (await f.client.waitForEnd(jobId)).end;
    };
    const full = await run('acme/chat-uncapped', messages);
    const cut = await run('acme/chat-capped', messages);
    expect(finishOf(cut.data)).toBe('length');
    expect(cut.usage!.completionTokens).toBe(8);
    const cutText = contentOf(cut.data);
    const rest = await run('acme/chat-uncapped', [
      ...messages,
      { role: 'assistant', content: cutText },
    ]);
    expect(cutText + contentOf(rest.data)).toBe(contentOf(full.data));
  });

  it('sends a node only the allowlisted parameters, whatever the job carries', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const allowed = { temperature: 0.5, top_p: 0.9, seed: 3, user: 'u-1', stop: ['zz'], n: 1 };
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId: await f.hold('acme/chat'),
      model: 'acme/chat',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: {
        model: 'acme/chat',
        messages,
        ...allowed,
        best_of: 8,
        ignore_eos: true,
        service_tier: 'default',
        stream_options: { include_usage: false },
      },
    });
    expect((await f.client.waitForEnd(jobId)).end.type).toBe('final');
    const sent = f.node.requests().at(-1)!.body as Record<string, unknown>;
    expect(sent).toEqual({ model: 'stand-in-model', messages, ...allowed, max_tokens: 4096 });
  });

  // Open models' chat templates know `system`, not `developer`; the reference API's
  // cost-free parameters are accepted by edge but mean nothing to a node.
  it('sends a node developer messages as system, the rest of the history as is, and no cost-free parameters', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const history = [
      { role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: 'Weather in Oran?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ];
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId: await f.hold('acme/chat'),
      model: 'acme/chat',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: {
        model: 'acme/chat',
        messages: history,
        store: true,
        metadata: { a: 'b' },
        prompt_cache_key: 'k',
        safety_identifier: 's',
        verbosity: 'low',
      },
    });
    expect((await f.client.waitForEnd(jobId)).end.type).toBe('final');
    const sent = f.node.requests().at(-1)!.body as Record<string, unknown>;
    expect(sent).toEqual({
      model: 'stand-in-model',
      messages: [{ ...history[0], role: 'system' }, ...history.slice(1)],
      max_tokens: 4096,
    });
  });

  it('fails a job whose deadline passed while queued: hold voided, no model call', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const holdId = await f.hold('acme/chat');
    // Generation calls only: the worker's health probes keep arriving meanwhile.
    const generationCalls = () => f.node.stats().byPath['/v1/chat/completions'] ?? 0;
    const callsBefore = generationCalls();
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model: 'acme/chat',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: { model: 'acme/chat', messages },
      deadlineAtMs: Date.now() - 1,
    });
    const { end } = await f.client.waitForEnd(jobId);
    expect(end).toMatchObject({ type: 'error', error: { code: 'GATEWAY_TIMEOUT' } });
    expect((await f.billing.hold(holdId)).status).toBe('voided');
    expect(generationCalls()).toBe(callsBefore);
  });

  it('runs a job delivered twice while it runs (its first channel died with a broker node) once: one generation, one settlement', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const holdId = await f.hold('acme/chat');
    const generationCalls = () => f.node.stats().byPath['/v1/chat/completions'] ?? 0;
    const callsBefore = generationCalls();
    f.node.setOptions({ firstTokenLatencyMs: 800 });
    try {
      const job = {
        jobId: `job-twice-${holdId}`,
        accountId: f.account.accountId,
        holdId,
        model: 'acme/chat',
        modelKind: 'chat' as const,
        endpoint: 'chat.completions' as const,
        request: { model: 'acme/chat', messages },
      };
      await f.client.publish(job);
      // The second copy arrives while the first is still waiting for its first token.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await f.client.publish(job);
      const { end } = await f.client.waitForEnd(job.jobId);
      expect(end.type).toBe('final');
      const cost = expectedCost(end.usage!);
      expect(await f.billing.hold(holdId)).toMatchObject({ status: 'settled', settled: cost });
      // Both copies were acked (nothing is redelivered later) and the model ran once.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(generationCalls()).toBe(callsBefore + 1);
      expect(f.client.repliesOf(job.jobId).filter((reply) => reply.type !== 'chunk')).toHaveLength(
        1,
      );
    } finally {
      f.node.setOptions({ firstTokenLatencyMs: 0 });
    }
  });

  it('answers model_not_found and voids the hold when the model left the catalog', async () => {
    await f.putModel('acme/chat', chatModel([f.node.url]));
    const holdId = await f.hold('acme/chat');
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model: 'acme/gone',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: { model: 'acme/gone', messages },
    });
    const { end } = await f.client.waitForEnd(jobId);
    expect(end).toMatchObject({ type: 'error', error: { code: 'model_not_found' } });
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });
});
