import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { splitIntoTokens } from '@gateway/tokenizer';
import { standInAnswer } from './answer.js';
import { streamedChoice } from './chat-stream.suite.js';
import { postJson, postStream } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';
import { expectRecipe, recipeSchema, weatherTool } from './tool-schemas.suite.js';

let node: StandInModelNode;
const url = () => `${node.url}/v1/chat/completions`;
const question = 'Give me a recipe for couscous.';
const messages = [{ role: 'user', content: question }];
const jsonSchema = {
  type: 'json_schema',
  json_schema: { name: 'recipe', schema: recipeSchema, strict: true },
};

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});
afterAll(() => node.close());

describe('stand-in model node: structured output', () => {
  it('answers json_schema with a conforming document, billed token by token', async () => {
    const res = await postJson(url(), { model: 'm', messages, response_format: jsonSchema });
    const content = res.body.choices[0].message.content as string;
    expect(res.body.choices[0].finish_reason).toBe('stop');
    expectRecipe(content);
    expect(res.body.usage.completion_tokens).toBe(splitIntoTokens(content).length);
    const again = await postJson(url(), { model: 'm', messages, response_format: jsonSchema });
    expect(again.body.choices[0].message.content).toBe(content);

    const { events } = await postStream(url(), {
      model: 'm',
      messages,
      response_format: jsonSchema,
      stream: true,
      stream_options: { include_usage: true },
    });
    const streamed = streamedChoice(events);
    expect(streamed.content).toBe(content);
    expect(streamed.finishReason).toBe('stop');
    expect(events.at(-2)).toMatchObject({
      usage: { completion_tokens: res.body.usage.completion_tokens },
    });
  });

  it('answers json_object with a small object carrying the answer', async () => {
    const res = await postJson(url(), {
      model: 'm',
      messages,
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(res.body.choices[0].message.content)).toEqual({
      answer: standInAnswer(question),
    });
  });

  it('calls a due tool rather than answer in the format', async () => {
    const res = await postJson(url(), {
      model: 'm',
      messages,
      tools: [weatherTool],
      response_format: jsonSchema,
    });
    expect(res.body.choices[0].finish_reason).toBe('tool_calls');
  });

  it('refuses response formats vLLM refuses', async () => {
    const cases = [
      'json',
      { type: 'yaml' },
      { type: 'json_schema' },
      { type: 'json_schema', json_schema: { schema: recipeSchema } },
    ];
    for (const response_format of cases) {
      const res = await postJson(url(), { model: 'm', messages, response_format });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toMatch(/^response_format/);
    }
  });
});
