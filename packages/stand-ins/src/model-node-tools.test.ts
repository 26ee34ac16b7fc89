import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens, splitIntoTokens } from '@gateway/tokenizer';
import { standInAnswer } from './answer.js';
import { toolResultsAnswer } from './chat-reply.js';
import { streamedChoice, textPromptTokens } from './chat-stream.suite.js';
import { postJson, postStream, type Json } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';
import { expectWeatherArguments, timeTool, weatherTool } from './tool-schemas.suite.js';

let node: StandInModelNode;
const url = () => `${node.url}/v1/chat/completions`;
const question = 'What is the weather in Oran this week?';
const user = { role: 'user', content: question };
const tools = [weatherTool, timeTool];
const toolsTokens = countTextTokens(JSON.stringify(tools));
const ask = (body: Record<string, unknown>) =>
  postJson(url(), { model: 'm', messages: [user], tools, ...body });

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});
afterAll(() => node.close());

/** The conversation after the model called a tool and the client ran it. */
function afterCall(call: Json, result: string) {
  return [
    user,
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', tool_call_id: call.id, content: result },
  ];
}

describe('stand-in model node: tool calls', () => {
  it('calls the first tool with schema-conforming JSON, then answers with the result', async () => {
    const first = await ask({});
    expect(first.status).toBe(200);
    const [choice] = first.body.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: expect.stringMatching(/^call_/),
          type: 'function',
          function: { name: 'get_weather', arguments: expect.any(String) },
        },
      ],
    });
    const call = choice.message.tool_calls[0];
    expectWeatherArguments(call.function.arguments);
    expect(first.body.usage).toEqual({
      prompt_tokens: textPromptTokens([user]) + toolsTokens,
      completion_tokens:
        countTextTokens('get_weather') + splitIntoTokens(call.function.arguments).length,
      total_tokens: expect.any(Number),
    });
    // Deterministic: the same conversation gets the same arguments.
    const again = await ask({});
    expect(again.body.choices[0].message.tool_calls[0].function).toEqual(call.function);

    const result = '{"temperature_c":31,"sky":"clear"}';
    const second = await ask({ messages: afterCall(call, result) });
    const content = second.body.choices[0].message.content as string;
    expect(second.body.choices[0].finish_reason).toBe('stop');
    expect(content).toContain(result);
    expect(content).toBe(toolResultsAnswer([result], question));
    expect(content.startsWith(`Based on the tool results: ${result}. `)).toBe(true);
    // Every field the model reads is billed: the call's name and arguments, the call id.
    const callTokens = [
      'assistant',
      'get_weather',
      call.function.arguments,
      'tool',
      result,
      call.id,
    ]
      .map((text) => countTextTokens(text))
      .reduce((sum, tokens) => sum + tokens, 6);
    expect(second.body.usage.prompt_tokens).toBe(
      textPromptTokens([user]) + callTokens + toolsTokens,
    );
  });

  it('streams a call like vLLM: a naming delta, argument pieces, tool_calls, usage', async () => {
    const body = {
      model: 'm',
      messages: [user],
      tools,
      stream: true,
      stream_options: { include_usage: true },
    };
    const { events } = await postStream(url(), body);
    expect(events.at(-1)).toBe('[DONE]');
    const choice = streamedChoice(events);
    const [call] = choice.calls;
    expect(choice.deltas[0]).toEqual({
      role: 'assistant',
      tool_calls: [
        {
          index: 0,
          id: call!.id,
          type: 'function',
          function: { name: 'get_weather', arguments: '' },
        },
      ],
    });
    const pieces = splitIntoTokens(call!.arguments);
    expect(choice.deltas.slice(1, -1)).toEqual(
      pieces.map((piece) => ({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
    );
    expect(choice.deltas.at(-1)).toEqual({});
    expect(choice.finishReason).toBe('tool_calls');
    expect(choice.content).toBe('');
    expectWeatherArguments(call!.arguments);
    const whole = await ask({});
    expect(call!.arguments).toBe(whole.body.choices[0].message.tool_calls[0].function.arguments);
    expect((events.at(-2) as Json).usage.completion_tokens).toBe(
      countTextTokens('get_weather') + pieces.length,
    );

    const result = 'Sunny, 31 °C';
    const fn = { name: call!.name, arguments: call!.arguments };
    const messages = afterCall({ id: call!.id, type: 'function', function: fn }, result);
    const followUp = await postStream(url(), { ...body, messages });
    const text = streamedChoice(followUp.events);
    expect(text.finishReason).toBe('stop');
    expect(text.content).toBe(toolResultsAnswer([result], question));
  });

  it('follows tool_choice: a named function, required, none', async () => {
    const named = await ask({ tool_choice: { type: 'function', function: { name: 'get_time' } } });
    const call = named.body.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe('get_time');
    expect(Object.keys(JSON.parse(call.function.arguments))).toEqual(['zone']);
    expect(named.body.choices[0].finish_reason).toBe('tool_calls');
    const required = await ask({ tool_choice: 'required' });
    expect(required.body.choices[0].message.tool_calls[0].function.name).toBe('get_weather');
    const none = await ask({ tool_choice: 'none' });
    expect(none.body.choices[0]).toMatchObject({
      message: { content: standInAnswer(question) },
      finish_reason: 'stop',
    });
  });

  it('writes the answer into an open parameters object', async () => {
    const open = [{ type: 'function', function: { name: 'note', parameters: {} } }];
    const res = await ask({ tools: open });
    const args = res.body.choices[0].message.tool_calls[0].function.arguments;
    expect(JSON.parse(args)).toEqual({ answer: standInAnswer(question) });
  });

  it('cuts a call at max_tokens (name first) with finish reason length, plain and streamed', async () => {
    const full = (await ask({})).body.choices[0].message.tool_calls[0].function.arguments;
    const maxTokens = countTextTokens('get_weather') + 4;
    const cut = await ask({ max_tokens: maxTokens });
    expect(cut.body.choices[0].finish_reason).toBe('length');
    const args = cut.body.choices[0].message.tool_calls[0].function.arguments;
    expect(args).toBe(splitIntoTokens(full).slice(0, 4).join(''));
    expect(cut.body.usage.completion_tokens).toBe(maxTokens);
    const { events } = await postStream(url(), {
      model: 'm',
      messages: [user],
      tools,
      max_completion_tokens: maxTokens,
      stream: true,
    });
    const streamed = streamedChoice(events);
    expect(streamed.finishReason).toBe('length');
    expect(streamed.calls[0]).toMatchObject({ arguments: args, argumentChunks: 4 });
  });

  it('refuses tool settings vLLM refuses', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
      [{ tools: undefined, tool_choice: 'auto' }, 'tool_choice'],
      [{ tool_choice: 'sometimes' }, 'tool_choice'],
      [{ tools: { type: 'function' } }, 'tools'],
      [{ tools: [{ type: 'function', function: {} }] }, 'tools[0]'],
    ];
    for (const [body, param] of cases) {
      const res = await ask(body);
      expect([res.status, res.body.error?.param]).toEqual([400, param]);
    }
  });
});
