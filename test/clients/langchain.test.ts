import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ChatMessage,
  HumanMessage,
  SystemMessage,
  type AIMessage,
  type AIMessageChunk,
  type BaseMessage,
} from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { z } from 'zod';
import {
  IMAGE_FIELD,
  MODELS,
  pngDataUrl,
  httpError,
  recordingFetch,
  rejection,
  startClientStack,
  tinyPng,
  weatherReport,
  type ClientStack,
} from './client-stack.js';

/*
 * LangChain (`@langchain/openai` over `@langchain/core`) against the gateway: ChatOpenAI on the
 * Chat Completions API and on the Responses API (`useResponsesApi: true`), each with tools bound
 * and a hand-written agent loop (invoke → run the tool → ToolMessage → invoke), plain and
 * streamed; structured output; content parts; images; error mapping; OpenAIEmbeddings. The suite
 * ends with the money check.
 */

let clients: ClientStack;

beforeAll(async () => {
  clients = await startClientStack('langchain');
}, 120_000);

afterAll(async () => {
  await clients?.close();
});

type Api = 'chat' | 'responses';

function chatModel(
  api: Api,
  options: { model?: string; apiKey?: string; requestId?: string; fetch?: typeof fetch } = {},
) {
  return new ChatOpenAI({
    model: options.model ?? MODELS.chat,
    apiKey: options.apiKey ?? clients.funded.apiKey,
    maxRetries: 0,
    useResponsesApi: api === 'responses',
    configuration: {
      baseURL: clients.baseURL,
      ...(options.requestId === undefined
        ? {}
        : { defaultHeaders: { 'X-Request-Id': options.requestId } }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    },
  });
}

const weather = tool(async ({ city }) => weatherReport(city), {
  name: 'get_weather',
  description: 'The current weather in a city.',
  schema: z.object({ city: z.string().describe('The city, e.g. Algiers') }),
});

const WEATHER_PROMPT = 'What is the weather in Algiers right now? Use the tool.';

/** What the messages' usage_metadata says equals what billing recorded for the request id. */
async function expectBilledAsReported(requestId: string, answers: AIMessage[]) {
  const billed = await clients.usageOf(requestId, answers.length);
  const reported = answers.map((answer) => answer.usage_metadata);
  expect(reported.every((usage) => usage !== undefined)).toBe(true);
  expect({
    records: billed.records,
    input: billed.promptTokens,
    output: billed.completionTokens,
  }).toEqual({
    records: answers.length,
    input: reported.reduce((sum, usage) => sum + (usage?.input_tokens ?? 0), 0),
    output: reported.reduce((sum, usage) => sum + (usage?.output_tokens ?? 0), 0),
  });
}

/** Runs every tool call of `answer` (ToolMessages appended to `messages`); their outputs. */
async function runToolCalls(answer: AIMessage, messages: BaseMessage[]): Promise<string[]> {
  const outputs: string[] = [];
  for (const call of answer.tool_calls ?? []) {
    expect(call.name).toBe('get_weather');
    const result = await weather.invoke(call);
    messages.push(result);
    outputs.push(String(result.content));
  }
  return outputs;
}

const APIS: [string, Api][] = [
  ['the Chat Completions API', 'chat'],
  ['the Responses API (useResponsesApi)', 'responses'],
];

/** The body's messages: Chat Completions `messages`, or Responses `input` items. */
const sentMessages = (api: Api, body: Record<string, unknown> | undefined) =>
  (api === 'chat' ? body?.messages : body?.input) as { role: string; content: unknown }[];

describe.each(APIS)('ChatOpenAI on %s', (_name, api) => {
  it('1a. runs a tool and answers with its result (bindTools, invoke loop)', async () => {
    const requestId = clients.requestId('tools');
    const model = chatModel(api, { requestId }).bindTools([weather]);
    const messages: BaseMessage[] = [new HumanMessage(WEATHER_PROMPT)];
    const first = await model.invoke(messages);
    expect(first.tool_calls).toHaveLength(1);
    expect(first.response_metadata).toMatchObject(
      api === 'chat' ? { finish_reason: 'tool_calls' } : { status: 'completed' },
    );
    messages.push(first);
    const [output] = await runToolCalls(first, messages);
    expect(output).toBe(weatherReport(String(first.tool_calls?.[0]?.args.city)));
    const second = await model.invoke(messages);
    expect(second.tool_calls ?? []).toEqual([]);
    expect(second.text).toContain(output);
    await expectBilledAsReported(requestId, [first, second]);
  });

  it('1b. runs a tool and answers with its result, streamed (.stream)', async () => {
    const requestId = clients.requestId('tools-stream');
    const model = chatModel(api, { requestId }).bindTools([weather]);
    const collect = async (messages: BaseMessage[]) => {
      let whole: AIMessageChunk | undefined;
      let chunks = 0;
      for await (const chunk of await model.stream(messages)) {
        whole = whole === undefined ? chunk : whole.concat(chunk);
        chunks += 1;
      }
      expect(chunks).toBeGreaterThan(1);
      return whole!;
    };
    const messages: BaseMessage[] = [new HumanMessage(WEATHER_PROMPT)];
    const first = await collect(messages);
    expect(first.tool_calls).toHaveLength(1);
    messages.push(first);
    const [output] = await runToolCalls(first, messages);
    const second = await collect(messages);
    expect(second.text).toContain(output);
    await expectBilledAsReported(requestId, [first, second]);
  });

  const forecast = z.object({
    city: z.string(),
    temperatureC: z.number(),
    conditions: z.enum(['sunny', 'cloudy', 'rain']),
    windy: z.boolean(),
    advice: z.array(z.string()),
  });

  it.each([['jsonSchema'], ['functionCalling']] as const)(
    '2. returns a structured object conforming to a zod schema (withStructuredOutput, %s)',
    async (method) => {
      const requestId = clients.requestId(`object-${method}`);
      const recorder = recordingFetch();
      const model = chatModel(api, { requestId, fetch: recorder.fetch }).withStructuredOutput(
        forecast,
        { name: 'forecast', method },
      );
      const result = await model.invoke('Give a one-day forecast for Oran.');
      expect(forecast.safeParse(result).success).toBe(true);
      // What the model read, whichever API the request came by.
      const read = clients.nodeChatBodies().at(-1)!;
      if (method === 'jsonSchema')
        expect(read.response_format).toMatchObject({ type: 'json_schema' });
      else expect(read.tool_choice).toMatchObject({ function: { name: 'forecast' } });
      expect(Object.keys(recorder.sent[0]!)).toContain(api === 'chat' ? 'messages' : 'input');
      expect((await clients.usageOf(requestId)).records).toBe(1);
    },
  );

  it('3. answers several text parts after a system and a developer message', async () => {
    const requestId = clients.requestId('parts');
    const recorder = recordingFetch();
    const answer = await chatModel(api, { requestId, fetch: recorder.fetch }).invoke([
      new SystemMessage('You are a weather assistant.'),
      new ChatMessage({ role: 'developer', content: 'Answer in one short sentence.' }),
      new HumanMessage({
        content: [
          { type: 'text', text: 'Here is the first part of the question.' },
          { type: 'text', text: 'And here is the second part.' },
        ],
      }),
    ]);
    expect(answer.text.length).toBeGreaterThan(0);
    const sent = sentMessages(api, recorder.sent[0]);
    expect(sent.map((message) => message.role)).toEqual(['system', 'developer', 'user']);
    expect(sent[2]?.content).toHaveLength(2);
    await expectBilledAsReported(requestId, [answer]);
  });

  const PROMPT = { type: 'text', text: 'What colour is this square?' } as const;
  /**
   * The image as the reference API's `image_url` part, and as a LangChain v1 standard content
   * block (`contentBlocks`: LangChain converts it; in `content` it would be sent as is).
   */
  const imageMessages = {
    image_url: () =>
      new HumanMessage({
        content: [PROMPT, { type: 'image_url', image_url: { url: pngDataUrl(), detail: 'low' } }],
      }),
    'standard content block': () =>
      new HumanMessage({
        contentBlocks: [
          PROMPT,
          { type: 'image', mimeType: 'image/png', data: tinyPng().toString('base64') },
        ],
      }),
  };
  const imageMessage = () => imageMessages.image_url();

  it.each(Object.keys(imageMessages) as (keyof typeof imageMessages)[])(
    '4a. answers an image part on a vision model (%s)',
    async (shape) => {
      expect(clients.visionSetupError).toBeNull();
      const requestId = clients.requestId('image');
      const recorder = recordingFetch();
      const answer = await chatModel(api, {
        requestId,
        model: MODELS.vision,
        fetch: recorder.fetch,
      }).invoke([imageMessages[shape]()]);
      expect(answer.text.length).toBeGreaterThan(0);
      const typesOf = (content: unknown) =>
        (content as { type: string }[]).map((part) => part.type);
      expect(typesOf(sentMessages(api, recorder.sent[0])[0]?.content)).toEqual(
        api === 'chat' ? ['text', 'image_url'] : ['input_text', 'input_image'],
      );
      expect(typesOf(clients.nodeChatBodies().at(-1)!.messages[0]?.content)).toEqual([
        'text',
        'image_url',
      ]);
      await expectBilledAsReported(requestId, [answer]);
    },
  );

  it('4b. surfaces a 400 naming the image part on a text-only model', async () => {
    const failure = httpError(await rejection(chatModel(api).invoke([imageMessage()])));
    expect([failure.status, failure.code]).toEqual([400, 'invalid_request_body']);
    expect(`${failure.param} ${failure.message}`).toContain(IMAGE_FIELD);
  });
});

describe.each(APIS)('6. error mapping on %s', (_name, api) => {
  const call = (apiKey: string, model: string = MODELS.chat) =>
    rejection(chatModel(api, { apiKey, model }).invoke('hello')).then(httpError);

  it('401 for an unknown key', async () => {
    const failure = await call(clients.unknownKey);
    expect([failure.status, failure.code]).toEqual([401, 'invalid_api_key']);
    expect(failure.lcErrorCode).toBe('MODEL_AUTHENTICATION');
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
    expect(failure.lcErrorCode).toBe('MODEL_NOT_FOUND');
  });
});

describe('OpenAIEmbeddings', () => {
  it('5. embeds a query and documents', async () => {
    const requestId = clients.requestId('embed');
    const embeddings = new OpenAIEmbeddings({
      model: MODELS.embedding,
      apiKey: clients.funded.apiKey,
      maxRetries: 0,
      configuration: { baseURL: clients.baseURL, defaultHeaders: { 'X-Request-Id': requestId } },
    });
    const query = await embeddings.embedQuery('the desert at dawn');
    expect(query.length).toBeGreaterThan(0);
    expect(query.every((value) => Number.isFinite(value))).toBe(true);
    const documents = await embeddings.embedDocuments(['a caravan', 'an oasis at noon']);
    expect(documents).toHaveLength(2);
    expect(documents[0]).not.toEqual(documents[1]);
    const billed = await clients.usageOf(requestId, 2);
    expect(billed.records).toBe(2);
    expect(billed.promptTokens).toBeGreaterThan(0);
  });

  it('6. the same errors for embeddings: 401 and 404', async () => {
    const embed = (apiKey: string, model: string) =>
      rejection(
        new OpenAIEmbeddings({
          model,
          apiKey,
          maxRetries: 0,
          configuration: { baseURL: clients.baseURL },
        }).embedQuery('hello'),
      ).then(httpError);
    expect((await embed(clients.unknownKey, MODELS.embedding)).status).toBe(401);
    const notFound = await embed(clients.funded.apiKey, 'clients/none');
    expect([notFound.status, notFound.code]).toEqual([404, 'model_not_found']);
  });
});

it('7. charged every request exactly its usage, never above its hold; the ledger is clean', async () => {
  expect(await clients.moneyViolations()).toEqual([]);
});
