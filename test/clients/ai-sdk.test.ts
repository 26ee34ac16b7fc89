import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  Output,
  embed,
  embedMany,
  generateText,
  isStepCount,
  streamText,
  tool,
  type EmbeddingModel,
  type LanguageModel,
  type LanguageModelUsage,
} from 'ai';
import { z } from 'zod';
import {
  IMAGE_FIELD,
  MODELS,
  gatewayError,
  recordingFetch,
  rejection,
  startClientStack,
  tinyPng,
  weatherReport,
  type ClientStack,
} from './client-stack.js';

/*
 * The Vercel AI SDK (`ai`) against the gateway, with its two providers a user points at an
 * OpenAI-compatible base URL: `@ai-sdk/openai`, both its default model (`provider(id)`, the
 * Responses API: `POST /v1/responses` with stored state, so a later turn sends the earlier answer
 * as an `item_reference`) and its Chat Completions model (`.chat(id)`), and
 * `@ai-sdk/openai-compatible`. Every call goes through the deployed shape, and the suite ends with
 * the money check: each request charged exactly its usage, never above its hold.
 */

let clients: ClientStack;

beforeAll(async () => {
  clients = await startClientStack('ai-sdk');
}, 120_000);

afterAll(async () => {
  await clients?.close();
});

interface Provider {
  /** What the chat model sends: Chat Completions `messages` or Responses `input` items. */
  api: 'chat' | 'responses';
  chat(modelId: string, options?: { apiKey?: string; fetch?: typeof fetch }): LanguageModel;
  embedding(modelId: string): EmbeddingModel;
  /** Provider options that make a system prompt a `developer` message, where supported. */
  developer: Record<string, Record<string, string>>;
  developerRole: 'developer' | 'system';
}

/** `@ai-sdk/openai`: its default model (the Responses API) or its `.chat` model. */
const openaiProvider = ({ apiKey = clients.funded.apiKey, fetch = globalThis.fetch } = {}) =>
  createOpenAI({ baseURL: clients.baseURL, apiKey, fetch });

const providers: [string, () => Provider][] = [
  [
    '@ai-sdk/openai (chat completions)',
    () => ({
      api: 'chat',
      chat: (modelId, options) => openaiProvider(options).chat(modelId),
      embedding: (modelId) => openaiProvider().embedding(modelId),
      developer: { openai: { systemMessageMode: 'developer' } },
      developerRole: 'developer',
    }),
  ],
  [
    '@ai-sdk/openai (its default model: the Responses API)',
    () => ({
      api: 'responses',
      chat: (modelId, options) => openaiProvider(options)(modelId),
      embedding: (modelId) => openaiProvider().embedding(modelId),
      developer: { openai: { systemMessageMode: 'developer' } },
      developerRole: 'developer',
    }),
  ],
  [
    '@ai-sdk/openai-compatible',
    () => {
      const provider = ({ apiKey = clients.funded.apiKey, fetch = globalThis.fetch } = {}) =>
        createOpenAICompatible({
          name: 'gateway',
          baseURL: clients.baseURL,
          apiKey,
          fetch,
          includeUsage: true,
          supportsStructuredOutputs: true,
        });
      return {
        api: 'chat',
        chat: (modelId, options) => provider(options).chatModel(modelId),
        embedding: (modelId) => provider().embeddingModel(modelId),
        developer: {},
        developerRole: 'system',
      };
    },
  ],
];

const weatherTool = () =>
  tool({
    description: 'The current weather in a city.',
    inputSchema: z.object({ city: z.string().describe('The city, e.g. Algiers') }),
    execute: async ({ city }) => weatherReport(city),
  });

const WEATHER_PROMPT = 'What is the weather in Algiers right now? Use the tool.';

/** The usage the client reported equals what billing recorded for the request id. */
async function expectBilledAsReported(requestId: string, steps: number, usage: LanguageModelUsage) {
  const billed = await clients.usageOf(requestId, steps);
  expect({
    records: billed.records,
    inputTokens: billed.promptTokens,
    outputTokens: billed.completionTokens,
  }).toEqual({ records: steps, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens });
}

/** An APICallError's HTTP status, headers and the gateway's error object. */
function apiError(error: unknown) {
  if (!APICallError.isInstance(error)) {
    throw new Error(`expected an APICallError, got ${String(error)}`, { cause: error });
  }
  return {
    status: error.statusCode,
    headers: error.responseHeaders ?? {},
    error: gatewayError(error.responseBody),
  };
}

describe.each(providers)('%s', (_name, makeProvider) => {
  let provider: Provider;
  beforeAll(() => {
    provider = makeProvider();
  });

  it('1a. runs a tool and answers with its result (generateText, two steps)', async () => {
    const requestId = clients.requestId('tools');
    const result = await generateText({
      model: provider.chat(MODELS.chat),
      tools: { get_weather: weatherTool() },
      prompt: WEATHER_PROMPT,
      stopWhen: isStepCount(3),
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
    });
    expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    const [call] = result.steps[0]!.toolCalls;
    expect(call?.toolName).toBe('get_weather');
    const output = result.steps[0]!.toolResults[0]?.output;
    expect(output).toBe(weatherReport((call?.input as { city: string }).city));
    // The second request carried the tool result, and the model read it.
    expect(result.text).toContain(output);
    await expectBilledAsReported(requestId, 2, result.totalUsage);
  });

  it('1b. runs a tool and answers with its result, streamed (streamText)', async () => {
    const requestId = clients.requestId('tools-stream');
    let streamError: unknown;
    const result = streamText({
      model: provider.chat(MODELS.chat),
      tools: { get_weather: weatherTool() },
      prompt: WEATHER_PROMPT,
      stopWhen: isStepCount(3),
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
      onError: ({ error }) => {
        streamError = error;
      },
    });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;
    if (streamError !== undefined) throw streamError;
    const steps = await result.steps;
    expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    const output = steps[0]!.toolResults[0]?.output;
    expect(typeof output).toBe('string');
    expect(streamed).toContain(output);
    expect(await result.text).toBe(streamed);
    await expectBilledAsReported(requestId, 2, await result.totalUsage);
  });

  it('2. returns a structured object conforming to a zod schema (Output.object)', async () => {
    const schema = z.object({
      city: z.string(),
      temperatureC: z.number(),
      conditions: z.enum(['sunny', 'cloudy', 'rain']),
      windy: z.boolean(),
      advice: z.array(z.string()),
    });
    const requestId = clients.requestId('object');
    const result = await generateText({
      model: provider.chat(MODELS.chat),
      output: Output.object({ schema, name: 'forecast' }),
      prompt: 'Give a one-day forecast for Oran.',
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
    });
    expect(schema.safeParse(result.output).success).toBe(true);
    expect(clients.nodeChatBodies().at(-1)?.response_format).toMatchObject({ type: 'json_schema' });
    await expectBilledAsReported(requestId, 1, result.totalUsage);
  });

  it('3. answers several text parts after a developer or system message', async () => {
    const requestId = clients.requestId('parts');
    const recorder = recordingFetch();
    const parts = [
      { type: 'text' as const, text: 'Here is the first part of the question.' },
      { type: 'text' as const, text: 'And here is the second part.' },
    ];
    const system = 'Answer in one short sentence.';
    const result = await generateText({
      model: provider.chat(MODELS.chat, { fetch: recorder.fetch }),
      system,
      messages: [{ role: 'user', content: parts }],
      providerOptions: provider.developer,
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
    });
    expect(result.text.length).toBeGreaterThan(0);
    const body = recorder.sent[0]!;
    const sent = (provider.api === 'chat' ? body.messages : body.input) as { role: string }[];
    expect(sent.map((message) => message.role)).toEqual([provider.developerRole, 'user']);
    // The model read both parts (the worker gives open models `developer` as `system`; from the
    // Responses API it is one text part, as the gateway stores the item).
    const read = clients.nodeChatBodies().at(-1)!.messages;
    expect(read[0]).toMatchObject({
      role: 'system',
      content: provider.api === 'chat' ? system : [{ type: 'text', text: system }],
    });
    expect(read[1]?.content).toEqual(parts);
    await expectBilledAsReported(requestId, 1, result.totalUsage);
  });

  const imageMessages = () => [
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'What colour is this square?' },
        { type: 'file' as const, data: tinyPng(), mediaType: 'image/png' },
      ],
    },
  ];

  it('4a. answers an image part on a vision model', async () => {
    expect(clients.visionSetupError).toBeNull();
    const requestId = clients.requestId('image');
    const result = await generateText({
      model: provider.chat(MODELS.vision),
      messages: imageMessages(),
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
    });
    expect(result.text.length).toBeGreaterThan(0);
    const sent = clients.nodeChatBodies().at(-1)?.messages as { content: { type: string }[] }[];
    expect(sent[0]?.content.map((part) => part.type)).toEqual(['text', 'image_url']);
    await expectBilledAsReported(requestId, 1, result.totalUsage);
  });

  it('4b. surfaces a 400 naming the image part on a text-only model', async () => {
    const failure = apiError(
      await rejection(
        generateText({
          model: provider.chat(MODELS.chat),
          messages: imageMessages(),
          maxRetries: 0,
        }),
      ),
    );
    expect(failure.status).toBe(400);
    expect(failure.error.code).toBe('invalid_request_body');
    expect(`${failure.error.param} ${failure.error.message}`).toContain(IMAGE_FIELD);
  });

  it('5. embeds one value and many (embed, embedMany)', async () => {
    const requestId = clients.requestId('embed');
    const one = await embed({
      model: provider.embedding(MODELS.embedding),
      value: 'the desert at dawn',
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
    });
    expect(one.embedding.length).toBeGreaterThan(0);
    expect(one.embedding.every((value) => Number.isFinite(value))).toBe(true);
    expect((await clients.usageOf(requestId)).promptTokens).toBe(one.usage.tokens);

    const manyId = clients.requestId('embed-many');
    const many = await embedMany({
      model: provider.embedding(MODELS.embedding),
      values: ['a caravan', 'an oasis at noon', 'the night sky'],
      maxRetries: 0,
      headers: { 'X-Request-Id': manyId },
    });
    expect(many.embeddings).toHaveLength(3);
    expect(new Set(many.embeddings.map((vector) => vector.join(','))).size).toBe(3);
    expect((await clients.usageOf(manyId)).promptTokens).toBe(many.usage.tokens);
  });

  describe('6. error mapping (status and the gateway code on APICallError)', () => {
    const call = (apiKey: string, model: string = MODELS.chat) =>
      rejection(
        generateText({
          model: provider.chat(model, { apiKey }),
          prompt: 'hello',
          maxRetries: 0,
        }),
      ).then(apiError);

    it('401 for an unknown key', async () => {
      const failure = await call(clients.unknownKey);
      expect([failure.status, failure.error.code]).toEqual([401, 'invalid_api_key']);
    });

    it('402 for an account without enough credit', async () => {
      const failure = await call(clients.broke.apiKey);
      expect([failure.status, failure.error.code]).toEqual([402, 'insufficient_balance']);
    });

    it('429 with Retry-After past the rate limit', async () => {
      await clients.exhaustRateLimit();
      const failure = await call(clients.limited.apiKey);
      expect([failure.status, failure.error.code]).toEqual([429, 'rate_limit_exceeded']);
      expect(Number(failure.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('404 for a model that is not in the catalog', async () => {
      const failure = await call(clients.funded.apiKey, 'clients/none');
      expect([failure.status, failure.error.code]).toEqual([404, 'model_not_found']);
    });
  });
});

const FREE_PARAMS = {
  store: true,
  metadata: { suite: 'clients' },
  prompt_cache_key: 'clients-suite',
  safety_identifier: 'user-1',
  user: 'user-1',
};

it.each([
  ['chat', { verbosity: 'low' }],
  ['responses', { text: { verbosity: 'low' } }],
] as const)(
  '3b. accepts the cost-free reference parameters the openai provider sends (%s)',
  async (api, verbosity) => {
    const requestId = clients.requestId('free-params');
    const recorder = recordingFetch();
    const provider = openaiProvider({ fetch: recorder.fetch });
    const result = await generateText({
      model: api === 'chat' ? provider.chat(MODELS.chat) : provider(MODELS.chat),
      prompt: 'hello',
      providerOptions: {
        openai: {
          store: true,
          metadata: { suite: 'clients' },
          promptCacheKey: 'clients-suite',
          safetyIdentifier: 'user-1',
          textVerbosity: 'low',
          user: 'user-1',
        },
      },
      maxRetries: 0,
      headers: { 'X-Request-Id': requestId },
    });
    expect(result.text.length).toBeGreaterThan(0);
    expect(recorder.sent[0]).toMatchObject({ ...FREE_PARAMS, ...verbosity });
    await expectBilledAsReported(requestId, 1, result.totalUsage);
  },
);

it('1c. continues a conversation on the Responses API: the earlier answer goes back as an item_reference', async () => {
  const model = (fetch?: typeof globalThis.fetch) => openaiProvider({ fetch })(MODELS.chat);
  const firstId = clients.requestId('turn-1');
  const first = await generateText({
    model: model(),
    prompt: 'Name a colour.',
    maxRetries: 0,
    headers: { 'X-Request-Id': firstId },
  });
  await expectBilledAsReported(firstId, 1, first.totalUsage);
  // The provider keeps the stored output item's id on the answer's text part.
  const answer = first.response.messages[0];
  const part = answer?.role === 'assistant' && Array.isArray(answer.content) && answer.content[0];
  const itemId = part && part.type === 'text' ? part.providerOptions?.openai?.itemId : undefined;
  expect(itemId).toMatch(/^msg_/);

  const secondId = clients.requestId('turn-2');
  const recorder = recordingFetch();
  const second = await generateText({
    model: model(recorder.fetch),
    messages: [
      { role: 'user', content: 'Name a colour.' },
      ...first.response.messages,
      { role: 'user', content: 'Another one.' },
    ],
    maxRetries: 0,
    headers: { 'X-Request-Id': secondId },
  });
  // The SDK sent no text of the first answer, only its id: the gateway read it from storage.
  expect(recorder.sent[0]?.input).toEqual([
    { role: 'user', content: [{ type: 'input_text', text: 'Name a colour.' }] },
    { type: 'item_reference', id: itemId },
    { role: 'user', content: [{ type: 'input_text', text: 'Another one.' }] },
  ]);
  expect(second.text.length).toBeGreaterThan(0);
  const read = clients.nodeChatBodies().at(-1)!;
  expect(read.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  expect(read.messages[1]?.content).toBe(first.text);
  await expectBilledAsReported(secondId, 1, second.totalUsage);
});

it('7. charged every request exactly its usage, never above its hold; the ledger is clean', async () => {
  expect(await clients.moneyViolations()).toEqual([]);
});
