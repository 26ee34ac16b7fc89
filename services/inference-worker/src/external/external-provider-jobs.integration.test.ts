import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createStandInProvider, type StandInProvider } from '@gateway/stand-ins';
import {
  contentOf,
  expectedCost,
  finishOf,
  streamedText,
  useWorkerFixture,
} from '../testing/worker-fixture.suite.js';

const API_KEY = 'sk-upstream-test-key-0123456789';
const messages = [{ role: 'user', content: 'What is 2 + 2?' }];
const warning = (name: string) =>
  `Parameter '${name}' is not supported by this model and was ignored.`;

describe('worker: the external provider through its allowlist', () => {
  let provider: StandInProvider;
  const external = { url: '', apiKey: API_KEY };
  beforeAll(async () => {
    provider = await createStandInProvider({
      apiKey: API_KEY,
      models: [{ id: 'reasoner-2026-01', acceptsReasoningNone: false }],
    });
    external.url = provider.url;
  });
  afterAll(async () => provider.close());
  const f = useWorkerFixture({ external });

  async function run(request: Record<string, unknown>, maxOutputTokens = 4096) {
    await f.putModel('ext/reasoner', {
      kind: 'chat',
      provider: 'external',
      upstream_model: 'reasoner-2026-01',
      max_output_tokens: maxOutputTokens,
    });
    provider.clearRequests();
    const holdId = await f.hold('ext/reasoner');
    const jobId = await f.client.publish({
      accountId: f.account.accountId,
      holdId,
      model: 'ext/reasoner',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      stream: request.stream === true,
      request: { model: 'ext/reasoner', messages, ...request },
    });
    const result = await f.client.waitForEnd(jobId);
    const sent = provider.requests().filter((r) => r.path === '/v1/chat/completions');
    return {
      holdId,
      ...result,
      sent: sent.map((r) => r.body as Record<string, unknown>),
      headers: sent.map((r) => r.headers),
    };
  }

  it('sends the resolved upstream id with the provider key, and returns no warnings when nothing was dropped', async () => {
    const { end, sent, headers, holdId } = await run({
      max_completion_tokens: 300,
      seed: 7,
      user: 'u1',
    });
    expect(sent).toEqual([
      { model: 'reasoner-2026-01', messages, max_completion_tokens: 300, seed: 7, user: 'u1' },
    ]);
    expect(headers[0]!.authorization).toBe('[redacted]');
    expect(end.type).toBe('final');
    expect(end.warnings).toBeUndefined();
    expect((end.data as { model: string }).model).toBe('ext/reasoner');
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost(end.usage!),
    });
  });

  it('translates max_tokens, drops what the table drops, and returns sorted warnings', async () => {
    const { end, sent } = await run({
      max_tokens: 250,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['\n'],
      usage: true,
      logit_bias: { '50256': -100 },
      parallel_tool_calls: true,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
    });
    expect(sent[0]!).toEqual({
      model: 'reasoner-2026-01',
      messages,
      max_completion_tokens: 250,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
    });
    expect(end.warnings).toEqual(
      ['logit_bias', 'parallel_tool_calls', 'stop', 'temperature', 'top_p', 'usage'].map(warning),
    );
  });

  it('keeps max_completion_tokens and warns about max_tokens when both are sent', async () => {
    const { sent, end } = await run({ max_tokens: 100, max_completion_tokens: 400 });
    expect(sent[0]!.max_completion_tokens).toBe(400);
    expect(sent[0]!).not.toHaveProperty('max_tokens');
    expect(end.warnings).toEqual([warning('max_tokens')]);
  });

  it('passes tools with parallel_tool_calls and reports reasoning tokens as billed output', async () => {
    const tools = [
      {
        type: 'function',
        function: { name: 'add', parameters: { type: 'object', properties: {} } },
      },
    ];
    const { sent, end, holdId } = await run({
      tools,
      parallel_tool_calls: false,
      reasoning_effort: 'high',
    });
    expect(sent[0]!).toMatchObject({ tools, parallel_tool_calls: false, reasoning_effort: 'high' });
    const usage = end.data as {
      usage: {
        completion_tokens: number;
        completion_tokens_details?: { reasoning_tokens: number };
      };
    };
    const reasoning = usage.usage.completion_tokens_details?.reasoning_tokens ?? 0;
    expect(reasoning).toBeGreaterThan(0);
    expect(end.usage!.completionTokens).toBe(usage.usage.completion_tokens);
    expect(end.usage!.completionTokens).toBeGreaterThanOrEqual(reasoning);
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost(end.usage!),
    });
  });

  it('returns empty content with finish_reason length when reasoning uses the whole ceiling', async () => {
    const { end } = await run({ max_completion_tokens: 10, reasoning_effort: 'high' });
    expect(finishOf(end.data)).toBe('length');
    expect(contentOf(end.data)).toBe('');
    expect(end.usage!.completionTokens).toBe(10);
  });

  it('refuses reasoning_effort "max" with invalid_request_body before calling the provider, voiding the hold', async () => {
    const { end, sent, holdId } = await run({ reasoning_effort: 'max' });
    expect(end).toMatchObject({ type: 'error', error: { code: 'invalid_request_body' } });
    expect(sent).toEqual([]);
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });

  it('maps a value the model refuses upstream (reasoning_effort none) to invalid_request_body', async () => {
    const { end, holdId } = await run({ reasoning_effort: 'none' });
    expect(end).toMatchObject({ type: 'error', error: { code: 'invalid_request_body' } });
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });

  it('streams with include_usage so the final chunk carries the real counts', async () => {
    const { end, chunks, sent, holdId } = await run({
      stream: true,
      stream_options: { include_usage: false },
    });
    expect(sent[0]!).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chunks.length).toBeGreaterThan(0);
    expect(streamedText(chunks).length).toBeGreaterThan(0);
    expect(end.data).toMatchObject({
      choices: [],
      usage: { completion_tokens: end.usage!.completionTokens },
    });
    expect(await f.billing.hold(holdId)).toMatchObject({
      status: 'settled',
      settled: expectedCost(end.usage!),
    });
  });

  it('caps max_completion_tokens at the catalog output cap', async () => {
    const { sent } = await run({ max_completion_tokens: 50_000 }, 2048);
    expect(sent[0]!.max_completion_tokens).toBe(2048);
  });
});
