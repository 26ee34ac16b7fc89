import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIProvider,
  OpenAIResponsesModel,
  Runner,
  setTracingDisabled,
  tool,
  type AgentInputItem,
  type Model,
  type ModelResponse,
  type RunItem,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import {
  IMAGE_FIELD,
  MODELS,
  httpError,
  pngDataUrl,
  recordingFetch,
  rejection,
  startClientStack,
  weatherReport,
  type ClientStack,
} from './client-stack.js';

/*
 * The OpenAI Agents SDK (`@openai/agents`) against the gateway, on both its model paths over an
 * `openai` client with the gateway's base URL: its default, a model name that the runner's
 * provider (`OpenAIProvider`) resolves to `OpenAIResponsesModel` (the Responses API, with stored
 * state: a later run continues by `previousResponseId`), and `OpenAIChatCompletionsModel`. An agent
 * calls a tool and answers with its result (plain and streamed); structured output with a zod
 * `outputType`, content parts, images, error mapping. No embeddings (the SDK has none). Tracing is
 * disabled: nothing may try to reach the internet. The suite ends with the money check.
 */

setTracingDisabled(true);

let clients: ClientStack;

beforeAll(async () => {
  clients = await startClientStack('agents');
}, 120_000);

afterAll(async () => {
  await clients?.close();
});

interface ClientOptions {
  model?: string;
  apiKey?: string;
  requestId?: string;
  fetch?: typeof fetch;
}

function gatewayClient(options: ClientOptions) {
  return new OpenAI({
    apiKey: options.apiKey ?? clients.funded.apiKey,
    baseURL: clients.baseURL,
    maxRetries: 0,
    ...(options.requestId === undefined
      ? {}
      : { defaultHeaders: { 'X-Request-Id': options.requestId } }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}

/** The runner's default model provider, over a gateway client. */
const providerOf = (options: ClientOptions) =>
  new OpenAIProvider({ openAIClient: gatewayClient(options) });

/** An agent's model and the runner that runs it, on one of the SDK's two model paths. */
type ModelPath = (options?: ClientOptions) => { model: Model | string; runner: Runner };

/** The default: a model name, resolved by the runner's provider to `OpenAIResponsesModel`. */
const onResponses: ModelPath = (options = {}) => ({
  model: options.model ?? MODELS.chat,
  runner: new Runner({ modelProvider: providerOf(options) }),
});

const onChatCompletions: ModelPath = (options = {}) => ({
  model: new OpenAIChatCompletionsModel(gatewayClient(options), options.model ?? MODELS.chat),
  runner: new Runner(),
});

const modelPaths: [string, 'chat' | 'responses', ModelPath][] = [
  ['a model name (the default: OpenAIResponsesModel)', 'responses', onResponses],
  ['OpenAIChatCompletionsModel', 'chat', onChatCompletions],
];

const getWeather = tool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: z.object({ city: z.string().describe('The city, e.g. Algiers') }),
  execute: async ({ city }) => weatherReport(city),
});

const weatherAgent = (model: Model | string) =>
  new Agent({
    name: 'Weather',
    instructions: 'Answer questions about the weather; use the tool.',
    model,
    tools: [getWeather],
  });

const WEATHER_PROMPT = 'What is the weather in Algiers right now?';

/** The usage the SDK collected from each model response equals what billing recorded. */
async function expectBilledAsReported(requestId: string, responses: ModelResponse[]) {
  const billed = await clients.usageOf(requestId, responses.length);
  expect({
    records: billed.records,
    input: billed.promptTokens,
    output: billed.completionTokens,
  }).toEqual({
    records: responses.length,
    input: responses.reduce((sum, response) => sum + response.usage.inputTokens, 0),
    output: responses.reduce((sum, response) => sum + response.usage.outputTokens, 0),
  });
}

/** The outputs of the tool calls the runner executed. */
function toolOutputs(items: RunItem[]): unknown[] {
  return items.flatMap((item) => (item.type === 'tool_call_output_item' ? [item.output] : []));
}

describe.each(modelPaths)('Agent with %s', (_name, api, modelPath) => {
  it('1a. runs a tool and answers with its result (run)', async () => {
    const requestId = clients.requestId('tools');
    const { model, runner } = modelPath({ requestId });
    const result = await runner.run(weatherAgent(model), WEATHER_PROMPT, { maxTurns: 3 });
    const outputs = toolOutputs(result.newItems);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatch(/^sunny, 21 C in /);
    expect(result.finalOutput).toContain(outputs[0]);
    expect(result.rawResponses).toHaveLength(2);
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('1b. runs a tool and answers with its result, streamed (run with stream: true)', async () => {
    const requestId = clients.requestId('tools-stream');
    const { model, runner } = modelPath({ requestId });
    const result = await runner.run(weatherAgent(model), WEATHER_PROMPT, {
      maxTurns: 3,
      stream: true,
    });
    let streamed = '';
    for await (const delta of result.toTextStream()) streamed += delta;
    await result.completed;
    expect(result.error).toBeNull();
    const outputs = toolOutputs(result.newItems);
    expect(outputs).toHaveLength(1);
    expect(streamed).toContain(outputs[0]);
    expect(result.finalOutput).toBe(streamed);
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('2. returns a structured object conforming to a zod outputType', async () => {
    const forecast = z.object({
      city: z.string(),
      temperatureC: z.number(),
      conditions: z.enum(['sunny', 'cloudy', 'rain']),
      windy: z.boolean(),
      advice: z.array(z.string()),
    });
    const requestId = clients.requestId('object');
    const recorder = recordingFetch();
    const { model, runner } = modelPath({ requestId, fetch: recorder.fetch });
    const agent = new Agent({
      name: 'Forecaster',
      instructions: 'Give one-day forecasts.',
      model,
      outputType: forecast,
    });
    const result = await runner.run(agent, 'Give a one-day forecast for Oran.');
    expect(forecast.safeParse(result.finalOutput).success).toBe(true);
    expect(recorder.sent[0]).toMatchObject(
      api === 'chat'
        ? { response_format: { type: 'json_schema' } }
        : { text: { format: { type: 'json_schema' } } },
    );
    expect(clients.nodeChatBodies().at(-1)?.response_format).toMatchObject({ type: 'json_schema' });
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('3. answers several text parts after system messages', async () => {
    const requestId = clients.requestId('parts');
    const recorder = recordingFetch();
    const { model, runner } = modelPath({ requestId, fetch: recorder.fetch });
    const agent = new Agent({ name: 'Terse', instructions: 'You are a weather assistant.', model });
    const input: AgentInputItem[] = [
      { role: 'system', content: 'Answer in one short sentence.' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Here is the first part of the question.' },
          { type: 'input_text', text: 'And here is the second part.' },
        ],
      },
    ];
    const result = await runner.run(agent, input);
    expect(String(result.finalOutput).length).toBeGreaterThan(0);
    // Chat: the instructions are the first message; Responses: `instructions`, then the items.
    const sent = recorder.sent[0]!;
    expect(Object.keys(sent)).toContain(api === 'chat' ? 'messages' : 'input');
    const read = clients.nodeChatBodies().at(-1)!.messages;
    expect(read.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    expect(read[2]?.content).toHaveLength(2);
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  const imageInput = (): AgentInputItem[] => [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'What colour is this square?' },
        { type: 'input_image', image: pngDataUrl(), detail: 'low' },
      ],
    },
  ];

  it('4a. answers an image part on a vision model', async () => {
    expect(clients.visionSetupError).toBeNull();
    const requestId = clients.requestId('image');
    const { model, runner } = modelPath({ requestId, model: MODELS.vision });
    const result = await runner.run(new Agent({ name: 'Eyes', model }), imageInput());
    expect(String(result.finalOutput).length).toBeGreaterThan(0);
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('4b. surfaces a 400 naming the image part on a text-only model', async () => {
    const { model, runner } = modelPath();
    const agent = new Agent({ name: 'Blind', model });
    const failure = httpError(await rejection(runner.run(agent, imageInput())));
    expect([failure.status, failure.code]).toEqual([400, 'invalid_request_body']);
    expect(`${failure.param} ${failure.message}`).toContain(IMAGE_FIELD);
  });
});

describe.each(modelPaths)('6. error mapping with %s', (_name, _api, modelPath) => {
  const call = (apiKey: string, modelId: string = MODELS.chat) => {
    const { model, runner } = modelPath({ apiKey, model: modelId });
    return rejection(runner.run(new Agent({ name: 'Failing', model }), 'hello')).then(httpError);
  };

  it('401 for an unknown key', async () => {
    const failure = await call(clients.unknownKey);
    expect([failure.status, failure.code]).toEqual([401, 'invalid_api_key']);
  });

  it('402 for an account without enough credit', async () => {
    const failure = await call(clients.broke.apiKey);
    expect([failure.status, failure.code]).toEqual([402, 'insufficient_balance']);
  });

  it('429 with Retry-After past the rate limit', async () => {
    await clients.exhaustRateLimit();
    const failure = await call(clients.limited.apiKey);
    expect([failure.status, failure.code]).toEqual([429, 'rate_limit_exceeded']);
    expect(Number(failure.retryAfter)).toBeGreaterThan(0);
  });

  it('404 for a model that is not in the catalog', async () => {
    const failure = await call(clients.funded.apiKey, 'clients/none');
    expect([failure.status, failure.code]).toEqual([404, 'model_not_found']);
  });
});

describe('Agent on the Responses API: stored state', () => {
  it('1c. the default provider resolves a model name to OpenAIResponsesModel', async () => {
    expect(await providerOf({}).getModel(MODELS.chat)).toBeInstanceOf(OpenAIResponsesModel);
  });

  it('1d. a later run continues from the stored response (previousResponseId)', async () => {
    const firstId = clients.requestId('turn-1');
    const turn1 = onResponses({ requestId: firstId });
    const first = await turn1.runner.run(weatherAgent(turn1.model), WEATHER_PROMPT, {
      maxTurns: 3,
    });
    const [firstOutput] = toolOutputs(first.newItems);
    await expectBilledAsReported(firstId, first.rawResponses);

    const secondId = clients.requestId('turn-2');
    const recorder = recordingFetch();
    const turn2 = onResponses({ requestId: secondId, fetch: recorder.fetch });
    const seen = clients.nodeChatBodies().length;
    const second = await turn2.runner.run(weatherAgent(turn2.model), 'And tomorrow?', {
      maxTurns: 3,
      previousResponseId: first.lastResponseId,
    });
    expect(String(second.finalOutput).length).toBeGreaterThan(0);
    // The SDK sent only the new turn and the id; the stored chain reached the model.
    expect(recorder.sent[0]).toMatchObject({
      previous_response_id: first.lastResponseId,
      input: [{ role: 'user', content: 'And tomorrow?' }],
    });
    const read = clients.nodeChatBodies()[seen]!.messages;
    expect(JSON.stringify(read)).toContain(JSON.stringify(WEATHER_PROMPT));
    expect(read.map((message) => message.content)).toContain(firstOutput);
    await expectBilledAsReported(secondId, second.rawResponses);
  });
});

it('7. charged every request exactly its usage, never above its hold; the ledger is clean', async () => {
  expect(await clients.moneyViolations()).toEqual([]);
});
