import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Agent,
  OpenAIChatCompletionsModel,
  run,
  setTracingDisabled,
  tool,
  type AgentInputItem,
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
 * The OpenAI Agents SDK (`@openai/agents`) against the gateway, through its Chat Completions model
 * (`OpenAIChatCompletionsModel` over an `openai` client with the gateway's base URL): an agent
 * that calls a tool and answers with its result (plain and streamed), structured output with a
 * zod `outputType`, content parts, images, error mapping. No embeddings (the SDK has none).
 * Tracing is disabled: nothing may try to reach the internet. The suite ends with the money check.
 */

setTracingDisabled(true);

let clients: ClientStack;

beforeAll(async () => {
  clients = await startClientStack('agents');
}, 120_000);

afterAll(async () => {
  await clients?.close();
});

function chatModel(
  options: { model?: string; apiKey?: string; requestId?: string; fetch?: typeof fetch } = {},
) {
  const client = new OpenAI({
    apiKey: options.apiKey ?? clients.funded.apiKey,
    baseURL: clients.baseURL,
    maxRetries: 0,
    ...(options.requestId === undefined
      ? {}
      : { defaultHeaders: { 'X-Request-Id': options.requestId } }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return new OpenAIChatCompletionsModel(client, options.model ?? MODELS.chat);
}

const getWeather = tool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: z.object({ city: z.string().describe('The city, e.g. Algiers') }),
  execute: async ({ city }) => weatherReport(city),
});

const weatherAgent = (requestId: string) =>
  new Agent({
    name: 'Weather',
    instructions: 'Answer questions about the weather; use the tool.',
    model: chatModel({ requestId }),
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

describe('Agent with OpenAIChatCompletionsModel', () => {
  it('1a. runs a tool and answers with its result (run)', async () => {
    const requestId = clients.requestId('tools');
    const result = await run(weatherAgent(requestId), WEATHER_PROMPT, { maxTurns: 3 });
    const outputs = toolOutputs(result.newItems);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatch(/^sunny, 21 C in /);
    expect(result.finalOutput).toContain(outputs[0]);
    expect(result.rawResponses).toHaveLength(2);
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('1b. runs a tool and answers with its result, streamed (run with stream: true)', async () => {
    const requestId = clients.requestId('tools-stream');
    const result = await run(weatherAgent(requestId), WEATHER_PROMPT, {
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
    const agent = new Agent({
      name: 'Forecaster',
      instructions: 'Give one-day forecasts.',
      model: chatModel({ requestId, fetch: recorder.fetch }),
      outputType: forecast,
    });
    const result = await run(agent, 'Give a one-day forecast for Oran.');
    expect(forecast.safeParse(result.finalOutput).success).toBe(true);
    expect(recorder.sent[0]?.response_format).toMatchObject({ type: 'json_schema' });
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('3. answers several text parts after system messages', async () => {
    const requestId = clients.requestId('parts');
    const recorder = recordingFetch();
    const agent = new Agent({
      name: 'Terse',
      instructions: 'You are a weather assistant.',
      model: chatModel({ requestId, fetch: recorder.fetch }),
    });
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
    const result = await run(agent, input);
    expect(String(result.finalOutput).length).toBeGreaterThan(0);
    const sent = recorder.sent[0]?.messages as { role: string; content: unknown }[];
    expect(sent.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    expect(sent[2]?.content).toHaveLength(2);
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
    const agent = new Agent({
      name: 'Eyes',
      model: chatModel({ requestId, model: MODELS.vision }),
    });
    const result = await run(agent, imageInput());
    expect(String(result.finalOutput).length).toBeGreaterThan(0);
    await expectBilledAsReported(requestId, result.rawResponses);
  });

  it('4b. surfaces a 400 naming the image part on a text-only model', async () => {
    const agent = new Agent({ name: 'Blind', model: chatModel() });
    const failure = httpError(await rejection(run(agent, imageInput())));
    expect([failure.status, failure.code]).toEqual([400, 'invalid_request_body']);
    expect(`${failure.param} ${failure.message}`).toContain(IMAGE_FIELD);
  });
});

describe('6. error mapping (status and the gateway code on the error)', () => {
  const call = (apiKey: string, model: string = MODELS.chat) =>
    rejection(
      run(new Agent({ name: 'Failing', model: chatModel({ apiKey, model }) }), 'hello'),
    ).then(httpError);

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

it('7. charged every request exactly its usage, never above its hold; the ledger is clean', async () => {
  expect(await clients.moneyViolations()).toEqual([]);
});
