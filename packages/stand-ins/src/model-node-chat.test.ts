import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens, splitIntoTokens } from '@gateway/tokenizer';
import { standInAnswer } from './answer.js';
import { textPromptTokens } from './chat-stream.suite.js';
import { postJson, postStream, type Json } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';

let node: StandInModelNode;
const chatUrl = () => `${node.url}/v1/chat/completions`;
const messages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Tell me about rivers.' },
];

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});
afterAll(() => node.close());

describe('stand-in model node: chat completions', () => {
  it('answers deterministically with real usage counts', async () => {
    const first = await postJson(chatUrl(), { model: 'm', messages });
    const second = await postJson(chatUrl(), { model: 'm', messages });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-stand-in')).toBe('stand-in-node');
    const content = first.body.choices[0].message.content as string;
    expect(content).toBe(standInAnswer('Tell me about rivers.'));
    expect(second.body.choices[0].message.content).toBe(content);
    expect(first.body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: textPromptTokens(messages),
        completion_tokens: countTextTokens(content),
        total_tokens: textPromptTokens(messages) + countTextTokens(content),
      },
    });
    expect(first.body.id).toMatch(/^chatcmpl-standin-/);
  });

  it('caps at max_tokens with length, and a continuation returns exactly the rest', async () => {
    const cut = await postJson(chatUrl(), { model: 'm', messages, max_tokens: 5 });
    expect(cut.body.choices[0].finish_reason).toBe('length');
    expect(cut.body.usage.completion_tokens).toBe(5);
    const head = cut.body.choices[0].message.content as string;
    const more = [...messages, { role: 'assistant', content: head }];
    const rest = await postJson(chatUrl(), { model: 'm', messages: more });
    expect(rest.body.choices[0].finish_reason).toBe('stop');
    const full = standInAnswer('Tell me about rivers.');
    expect(head + rest.body.choices[0].message.content).toBe(full);
    expect(rest.body.usage.completion_tokens).toBe(splitIntoTokens(full).length - 5);
    expect(rest.body.usage.prompt_tokens).toBe(textPromptTokens(more));
  });

  it('cuts at a stop sequence (not included) with finish reason stop', async () => {
    const full = standInAnswer('Tell me about rivers.');
    const stop = full.slice(12, 16);
    const res = await postJson(chatUrl(), { model: 'm', messages, stop: [stop] });
    expect(res.body.choices[0]).toMatchObject({
      message: { content: full.slice(0, full.indexOf(stop)) },
      finish_reason: 'stop',
    });
  });

  it('gives n choices that differ by index and sums their usage', async () => {
    const res = await postJson(chatUrl(), { model: 'm', messages, n: 3 });
    const contents = res.body.choices.map(
      (c: { message: { content: string } }) => c.message.content,
    );
    expect(new Set(contents).size).toBe(3);
    const total = contents.reduce((sum: number, c: string) => sum + countTextTokens(c), 0);
    expect(res.body.usage.completion_tokens).toBe(total);
  });

  it('streams chat.completion.chunk events, a usage chunk on request, then [DONE]', async () => {
    const body = { model: 'm', messages, stream: true, stream_options: { include_usage: true } };
    const { status, headers, events } = await postStream(chatUrl(), body);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Json[];
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe(standInAnswer('Tell me about rivers.'));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: textPromptTokens(messages),
        completion_tokens: countTextTokens(text),
      },
    });
    // One chunk per token: what a client counts equals what is billed.
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBe(countTextTokens(text));
  });

  it('omits the usage chunk without include_usage', async () => {
    const { events } = await postStream(chatUrl(), { model: 'm', messages, stream: true });
    expect((events.at(-2) as Json).choices[0].finish_reason).toBe('stop');
    expect(events.some((e: Json) => e.usage !== undefined)).toBe(false);
  });

  it('rejects invalid requests OpenAI-style', async () => {
    const cases: [unknown, number, string | null][] = [
      [{ model: 'm', messages: [] }, 400, 'messages'],
      [{ model: 'm', messages, n: 17 }, 400, 'n'],
      [{ model: 'm', messages, max_tokens: 'ten' }, 400, 'max_tokens'],
      [{ model: 'm', messages, stop: ['a', 'b', 'c', 'd', 'e'] }, 400, 'stop'],
      [{ model: 'm', messages, stream_options: { include_usage: true } }, 400, 'stream_options'],
      [{ model: 'm', messages, max_tokens: 40_000 }, 400, 'max_tokens'],
      [{ messages }, 400, 'model'],
    ];
    for (const [body, status, param] of cases) {
      const res = await postJson(chatUrl(), body);
      expect([res.status, res.body.error?.param]).toEqual([status, param]);
      expect(typeof res.body.error.message).toBe('string');
    }
    const bad = await fetch(chatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(bad.status).toBe(400);
    const huge = await postJson(chatUrl(), {
      model: 'm',
      messages,
      pad: 'x'.repeat(3 * 1024 * 1024),
    });
    expect(huge.status).toBe(413);
  });

  it('serves only the configured models when given, and lists them', async () => {
    node.setOptions({ models: ['only-this'] });
    try {
      expect((await postJson(chatUrl(), { model: 'other', messages })).status).toBe(404);
      expect((await postJson(chatUrl(), { model: 'only-this', messages })).status).toBe(200);
      const list = await (await fetch(`${node.url}/v1/models`)).json();
      expect(list).toMatchObject({ object: 'list', data: [{ id: 'only-this', object: 'model' }] });
    } finally {
      node.setOptions({ models: null });
    }
  });
});

describe('stand-in model node: text completions', () => {
  const url = () => `${node.url}/v1/completions`;

  it('completes a prompt with the legacy default of 16 tokens and real usage', async () => {
    const res = await postJson(url(), { model: 'm', prompt: 'Once upon a time' });
    expect(res.body).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, text: expect.any(String), finish_reason: 'length' }],
      usage: { prompt_tokens: countTextTokens('Once upon a time'), completion_tokens: 16 },
    });
    expect(standInAnswer('Once upon a time').startsWith(res.body.choices[0].text)).toBe(true);
  });

  it('streams text_completion chunks and a usage chunk', async () => {
    const body = {
      model: 'm',
      prompt: 'p',
      max_tokens: 500,
      stream: true,
      stream_options: { include_usage: true },
    };
    const { events } = await postStream(url(), body);
    const chunks = events.slice(0, -1) as Json[];
    const text = chunks.map((c) => c.choices[0]?.text ?? '').join('');
    expect(text).toBe(standInAnswer('p'));
    expect(chunks.at(-1).usage.completion_tokens).toBe(countTextTokens(text));
    expect(events.at(-1)).toBe('[DONE]');
  });
});

describe('stand-in model node: pacing', () => {
  it('waits the first-token latency and paces tokens', async () => {
    node.setOptions({ firstTokenLatencyMs: 150, tokensPerSecond: 100 });
    try {
      const startedAt = Date.now();
      await postJson(chatUrl(), { model: 'm', messages, max_tokens: 11 });
      // 150 ms to the first token, then 10 gaps of 10 ms.
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(240);
    } finally {
      node.setOptions({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
    }
  });
});
