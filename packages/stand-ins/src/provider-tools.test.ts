import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens, splitIntoTokens } from '@gateway/tokenizer';
import { toolResultsAnswer } from './chat-reply.js';
import { streamedChoice, textPromptTokens } from './chat-stream.suite.js';
import { postJson, postStream, type Json } from './http-client.suite.js';
import { createStandInProvider, type StandInProvider } from './provider.js';
import {
  expectRecipe,
  expectWeatherArguments,
  recipeSchema,
  weatherTool,
} from './tool-schemas.suite.js';

const API_KEY = 'sk-stand-in-tools';
const auth = { authorization: `Bearer ${API_KEY}` };
const question = 'Will it rain in Tlemcen tomorrow?';
const user = { role: 'user', content: question };
const tools = [weatherTool];
let provider: StandInProvider;
const url = () => `${provider.url}/v1/chat/completions`;
const ask = (body: Record<string, unknown>) =>
  postJson(url(), { model: 'o-mini', messages: [user], tools, ...body }, auth);
const stream = (body: Record<string, unknown>) =>
  postStream(url(), { model: 'o-mini', messages: [user], tools, stream: true, ...body }, auth);

beforeAll(async () => {
  provider = await createStandInProvider({
    apiKey: API_KEY,
    models: [{ id: 'o-mini' }],
    firstTokenLatencyMs: 0,
    tokensPerSecond: 0,
  });
});
afterAll(() => provider.close());

describe('stand-in provider: tools and structured output', () => {
  it('calls a tool after reasoning, then answers with its result', async () => {
    const first = await ask({ reasoning_effort: 'low' });
    const [choice] = first.body.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls[0];
    expect(call).toMatchObject({ id: expect.stringMatching(/^call_/), type: 'function' });
    expectWeatherArguments(call.function.arguments);
    const output = countTextTokens('get_weather') + splitIntoTokens(call.function.arguments).length;
    expect(first.body.usage).toMatchObject({
      prompt_tokens: textPromptTokens([user]) + countTextTokens(JSON.stringify(tools)),
      completion_tokens: 16 + output,
      completion_tokens_details: { reasoning_tokens: 16 },
    });

    const result = 'Rain: 70%';
    const messages = [
      { role: 'developer', content: 'Answer in one line.' },
      user,
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: result },
    ];
    const second = await ask({ messages });
    expect(second.body.choices[0]).toMatchObject({
      message: { content: toolResultsAnswer([result], question) },
      finish_reason: 'stop',
    });
  });

  it('streams a call like OpenAI: role and name first, argument pieces, usage', async () => {
    const { events } = await stream({ stream_options: { include_usage: true } });
    const choice = streamedChoice(events);
    const [call] = choice.calls;
    expect(choice.deltas[0]).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        {
          index: 0,
          id: call!.id,
          type: 'function',
          function: { name: 'get_weather', arguments: '' },
        },
      ],
    });
    expect(choice.finishReason).toBe('tool_calls');
    expectWeatherArguments(call!.arguments);
    expect(call!.argumentChunks).toBe(splitIntoTokens(call!.arguments).length);
    const usage = (events.at(-2) as Json).usage;
    expect(usage.completion_tokens).toBe(
      64 + countTextTokens('get_weather') + call!.argumentChunks,
    );
  });

  it('cuts a call at max_completion_tokens with finish reason length', async () => {
    const limit = 16 + countTextTokens('get_weather') + 3;
    const res = await ask({ reasoning_effort: 'low', max_completion_tokens: limit });
    expect(res.body.choices[0].finish_reason).toBe('length');
    const args = res.body.choices[0].message.tool_calls[0].function.arguments;
    expect(splitIntoTokens(args)).toHaveLength(3);
    expect(res.body.usage.completion_tokens).toBe(limit);
    const streamed = streamedChoice(
      (await stream({ reasoning_effort: 'low', max_completion_tokens: limit })).events,
    );
    expect(streamed).toMatchObject({ finishReason: 'length', calls: [{ arguments: args }] });
  });

  it('answers json_schema with a conforming document', async () => {
    const response_format = {
      type: 'json_schema',
      json_schema: { name: 'recipe', schema: recipeSchema, strict: true },
    };
    const res = await ask({ tools: undefined, response_format });
    expectRecipe(res.body.choices[0].message.content);
    const streamed = streamedChoice((await stream({ tools: undefined, response_format })).events);
    expect(streamed.content).toBe(res.body.choices[0].message.content);
  });

  it('accepts the legacy function role and refuses malformed messages', async () => {
    const messages = [user, { role: 'function', name: 'lookup', content: 'Dry.' }];
    const res = await ask({ tools: undefined, messages });
    expect(res.body.choices[0].message.content).toBe(toolResultsAnswer(['Dry.'], question));
    const bad = await ask({ messages: [{ role: 'user', content: { text: 'x' } }] });
    expect([bad.status, bad.body.error.param]).toEqual([400, 'messages[0].content']);
  });
});
