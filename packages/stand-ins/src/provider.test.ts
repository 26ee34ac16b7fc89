import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens } from '@gateway/tokenizer';
import { standInAnswer } from './answer.js';
import { textPromptTokens } from './chat-stream.suite.js';
import { postJson, postStream, type Json } from './http-client.suite.js';
import { createStandInProvider, type StandInProvider } from './provider.js';

const API_KEY = 'sk-stand-in-test';
const auth = { authorization: `Bearer ${API_KEY}` };
const messages = [{ role: 'user', content: 'Why is the sky blue?' }];
let provider: StandInProvider;
const url = () => `${provider.url}/v1/chat/completions`;
const ask = (body: Record<string, unknown>) =>
  postJson(url(), { model: 'o-mini', messages, ...body }, auth);

beforeAll(async () => {
  provider = await createStandInProvider({
    apiKey: API_KEY,
    models: [{ id: 'o-mini' }, { id: 'o-strict', acceptsReasoningNone: false }],
    firstTokenLatencyMs: 0,
    tokensPerSecond: 0,
  });
});
afterAll(() => provider.close());

describe('stand-in provider: authentication and recording', () => {
  it('requires the Bearer key, OpenAI-style', async () => {
    const missing = await postJson(url(), { model: 'o-mini', messages });
    expect(missing.status).toBe(401);
    expect(missing.body.error.type).toBe('invalid_request_error');
    const wrong = await postJson(
      url(),
      { model: 'o-mini', messages },
      { authorization: 'Bearer nope' },
    );
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_api_key']);
    expect(JSON.stringify(wrong.body)).not.toContain('nope');
    const models = await fetch(`${provider.url}/v1/models`, { headers: auth });
    expect(await models.json()).toMatchObject({ data: [{ id: 'o-mini' }, { id: 'o-strict' }] });
  });

  it('records every request as received, authorization redacted', async () => {
    provider.clearRequests();
    const body = { model: 'o-mini', messages, max_completion_tokens: 500, seed: 7 };
    await postJson(url(), body, auth);
    const [recorded] = provider.requests();
    expect(recorded).toMatchObject({ path: '/v1/chat/completions', body });
    expect(recorded!.headers.authorization).toBe('[redacted]');
    expect(JSON.stringify(provider.requests())).not.toContain(API_KEY);
  });
});

describe('stand-in provider: rejections', () => {
  const cases: [string, Record<string, unknown>, number, string | null, string | null][] = [
    ['max_tokens', { max_tokens: 10 }, 400, 'max_tokens', 'unsupported_parameter'],
    ['temperature 0.5', { temperature: 0.5 }, 400, 'temperature', 'unsupported_value'],
    ['top_p', { top_p: 0.9 }, 400, 'top_p', 'unsupported_parameter'],
    ['stop', { stop: ['x'] }, 400, 'stop', 'unsupported_parameter'],
    ['unknown field', { usage: true }, 400, null, null],
    ['effort max', { reasoning_effort: 'max' }, 400, 'reasoning_effort', 'invalid_value'],
    [
      'effort none (strict model)',
      { model: 'o-strict', reasoning_effort: 'none' },
      400,
      'reasoning_effort',
      'unsupported_value',
    ],
    ['unknown model', { model: 'gpt-9' }, 404, null, 'model_not_found'],
    [
      'parallel_tool_calls without tools',
      { parallel_tool_calls: true },
      400,
      'parallel_tool_calls',
      null,
    ],
    [
      'stream_options without stream',
      { stream_options: { include_usage: true } },
      400,
      'stream_options',
      'invalid_value',
    ],
    [
      'max_completion_tokens 0',
      { max_completion_tokens: 0 },
      400,
      'max_completion_tokens',
      'integer_below_min_value',
    ],
  ];
  it.each(cases)('refuses %s', async (_name, body, status, param, code) => {
    const res = await ask(body);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, code });
  });

  it('names the unknown argument, and accepts temperature 1 and effort none where allowed', async () => {
    expect((await ask({ usage: true })).body.error.message).toBe(
      'Unrecognized request argument supplied: usage',
    );
    expect((await ask({ temperature: 1, reasoning_effort: 'none' })).status).toBe(200);
  });
});

describe('stand-in provider: reasoning and usage', () => {
  it('spends medium reasoning by default and reports it in usage', async () => {
    const res = await ask({});
    const content = res.body.choices[0].message.content as string;
    expect(content).toBe(standInAnswer('Why is the sky blue?'));
    expect(res.body.choices[0].finish_reason).toBe('stop');
    const output = countTextTokens(content);
    expect(res.body.usage).toMatchObject({
      prompt_tokens: textPromptTokens(messages),
      completion_tokens: 64 + output,
      total_tokens: textPromptTokens(messages) + 64 + output,
      completion_tokens_details: { reasoning_tokens: 64 },
    });
  });

  it('returns empty content with length when reasoning eats the budget', async () => {
    const res = await ask({ reasoning_effort: 'high', max_completion_tokens: 100 });
    expect(res.body.choices[0]).toMatchObject({
      message: { content: '' },
      finish_reason: 'length',
    });
    expect(res.body.usage).toMatchObject({
      completion_tokens: 100,
      completion_tokens_details: { reasoning_tokens: 100 },
    });
  });

  it('cuts content to what reasoning left of the budget', async () => {
    const res = await ask({ reasoning_effort: 'low', max_completion_tokens: 20 });
    expect(res.body.choices[0].finish_reason).toBe('length');
    expect(countTextTokens(res.body.choices[0].message.content)).toBe(4);
    expect(res.body.usage.completion_tokens).toBe(20);
  });

  it('streams like OpenAI with usage: null on chunks and a final usage chunk', async () => {
    const { events } = await postStream(
      url(),
      { model: 'o-mini', messages, stream: true, stream_options: { include_usage: true } },
      auth,
    );
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Json[];
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe(standInAnswer('Why is the sky blue?'));
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        completion_tokens: 64 + countTextTokens(text),
        completion_tokens_details: { reasoning_tokens: 64 },
      },
    });
  });

  it('calls a forced function tool (OpenAI ends a named call with stop)', async () => {
    const tools = [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } },
    ];
    const named = await ask({
      tools,
      tool_choice: { type: 'function', function: { name: 'lookup' } },
    });
    expect(named.body.choices[0]).toMatchObject({
      message: { content: null, tool_calls: [{ type: 'function', function: { name: 'lookup' } }] },
      finish_reason: 'stop',
    });
    const args = named.body.choices[0].message.tool_calls[0].function.arguments;
    expect(JSON.parse(args)).toEqual({ answer: standInAnswer('Why is the sky blue?') });
    const required = await ask({ tools, tool_choice: 'required', parallel_tool_calls: false });
    expect(required.body.choices[0].finish_reason).toBe('tool_calls');
    const { events } = await postStream(
      url(),
      { model: 'o-mini', messages, tools, tool_choice: 'required', stream: true },
      auth,
    );
    const deltas = (events.slice(0, -1) as Json[]).map((c) => c.choices[0].delta);
    expect(deltas.some((d) => d.tool_calls?.[0]?.function?.name === 'lookup')).toBe(true);
  });
});

describe('stand-in provider: faults', () => {
  it('answers status faults and cuts streams like the node', async () => {
    provider.setFault({ kind: 'status', status: 500, count: 1 });
    expect((await ask({})).status).toBe(500);
    expect((await ask({})).status).toBe(200);
    provider.setFault({ kind: 'drop-mid-stream', afterTokens: 2, count: 1 });
    await expect(
      postStream(url(), { model: 'o-mini', messages, stream: true }, auth),
    ).rejects.toThrow();
    provider.setFault({ kind: 'timeout', count: 1 });
    await expect(
      fetch(url(), {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'o-mini', messages }),
        signal: AbortSignal.timeout(100),
      }),
    ).rejects.toThrow();
    provider.clearFault();
  });
});
