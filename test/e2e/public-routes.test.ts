import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  PUBLIC_API_PREFIX,
  PUBLIC_REFERENCED_SCHEMAS,
  PUBLIC_ROUTES,
  ajv,
  routePath,
  type PublicRoute,
  type RouteParams,
} from '@gateway/contracts';
import {
  RouteAgreement,
  schemaViolation,
} from '../../packages/testing/src/route-agreement.suite.js';
import {
  MEDIA_MODELS,
  pricedModel,
  useRealStack,
} from '../../services/edge/src/testing/real-stack.suite.js';

/**
 * The public API agrees with its contracts (`PUBLIC_ROUTES`, ADR 0069): every route is called on
 * the real stack (edge → RabbitMQ → the real worker → a stand-in model node, the real billing),
 * and each answer is checked against its route's status and answer schema, each streamed event
 * against its route's event schema. These schemas are what the OpenAPI document publishes; a
 * route added to the table without a call here fails the last test.
 */

const CHAT = 'acme/talk';
const stack = useRealStack({ [CHAT]: pricedModel('chat'), ...MEDIA_MODELS });
const R = PUBLIC_ROUTES;
const agreement = new RouteAgreement();
const messages = [{ role: 'user', content: 'Say something short.' }];

beforeAll(() => {
  // `_service` and a list's models are `$ref`s: their schemas must be known to validate.
  for (const schema of PUBLIC_REFERENCED_SCHEMAS) {
    if (!ajv.getSchema(String(schema.$id))) ajv.addSchema(schema);
  }
});

interface Call<Called extends PublicRoute> {
  params?: RouteParams<Called>;
  query?: URLSearchParams;
  body?: unknown;
  form?: FormData;
  /** The credential: the tenant's API key unless given (null: none). */
  credential?: string | null;
}

/** Sends one request of `route` over HTTP, as a client of the public API would. */
function send<Called extends PublicRoute>(route: Called, call: Call<Called>): Promise<Response> {
  const headers: Record<string, string> = {};
  const credential = call.credential === undefined ? stack.tenant.apiKey : call.credential;
  if (credential !== null) headers.Authorization = `Bearer ${credential}`;
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  const path = routePath(route, call.params, call.query);
  return fetch(`${stack.baseUrl}${PUBLIC_API_PREFIX}${path}`, {
    method: route.method,
    headers,
    body: call.form ?? (call.body === undefined ? undefined : JSON.stringify(call.body)),
  });
}

/** Calls `route` and checks its JSON answer against the contract; returns the answer. */
async function call<Called extends PublicRoute>(
  route: Called,
  request: Call<Called> = {},
): Promise<Record<string, unknown>> {
  const response = await send(route, request);
  const body = (await response.json()) as Record<string, unknown>;
  agreement.check(route, response.status, body);
  return body;
}

/** The `data:` payloads of a server-sent event stream, `[DONE]` left out. */
async function streamedEvents(response: Response): Promise<unknown[]> {
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await response.text();
  return text
    .split('\n\n')
    .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => line.slice('data: '.length))
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as unknown);
}

/** Streams `route` and checks every event against the contract's event schema. */
async function checkStream(route: PublicRoute, body: Record<string, unknown>): Promise<void> {
  const response = await send(route, { body: { ...body, stream: true } });
  expect(response.status).toBe(200);
  const events = await streamedEvents(response);
  expect(events.length).toBeGreaterThan(1);
  for (const event of events) {
    expect({ event, violation: schemaViolation(route.events!, event) }).toEqual({ event });
  }
}

describe('the public API agrees with PUBLIC_ROUTES', () => {
  let receiptId: string;

  it('chat completions: JSON and every streamed chunk', async () => {
    const completion = await call(R.chatCompletions, { body: { model: CHAT, messages } });
    receiptId = String(completion.id);
    await checkStream(R.chatCompletions, { model: CHAT, messages });
  });

  it('responses: create, stream, read, list input items, cancel, delete', async () => {
    const created = await call(R.createResponse, { body: { model: CHAT, input: 'Hello there' } });
    const params = { response_id: String(created.id) };
    await checkStream(R.createResponse, { model: CHAT, input: 'Hello again' });
    await call(R.getResponse, { params });
    await call(R.responseInputItems, { params, query: new URLSearchParams({ limit: '5' }) });
    const background = await call(R.createResponse, {
      body: { model: CHAT, input: 'In the background', background: true },
    });
    await call(R.cancelResponse, { params: { response_id: String(background.id) } });
    await call(R.deleteResponse, { params });
  });

  it('native inference: the synchronous result and the webhook acknowledgement', async () => {
    const params = { model: CHAT };
    const input = { input: 'Once upon a time', parameters: { max_new_tokens: 8 } };
    await call(R.nativeInference, { params, body: input });
    const ack = await call(R.nativeInference, {
      params,
      body: { ...input, webhook: 'https://hooks.example.com/done' },
    });
    expect(ack.inference_status).toEqual({ status: 'queued' });
  });

  it('the media routes, speech as audio bytes and a transcription from an upload', async () => {
    await call(R.embeddings, { body: { model: 'acme/embed', input: ['dawn', 'dusk'] } });
    await call(R.images, { body: { model: 'acme/paint', prompt: 'a camel', size: '256x256' } });
    await call(R.video, { body: { model: 'acme/film', prompt: 'dunes', seconds: 2 } });
    await call(R.rerank, {
      body: { model: 'acme/rank', query: 'water', documents: ['sand', 'an oasis'], top_n: 1 },
    });

    const speech = await send(R.speech, {
      body: { model: 'acme/voice', input: 'Marhaba.', voice: 'alloy' },
    });
    const audio = Buffer.from(await speech.arrayBuffer());
    expect(speech.headers.get('content-type')).toMatch(/^audio\//);
    expect(audio.byteLength).toBeGreaterThan(0);
    agreement.check(R.speech, speech.status, undefined);

    const form = new FormData();
    form.set('model', 'acme/ear');
    form.set(R.transcriptions.upload.file, new Blob([audio], { type: 'audio/mpeg' }), 'a.mp3');
    await call(R.transcriptions, { form });
  });

  it('scoped tokens: create, inspect, revoke', async () => {
    const created = await call(R.createScopedToken, {
      body: { api_key_name: 'auto', expires_delta: 600 },
    });
    const query = new URLSearchParams({ jwt: String(created.token) });
    await call(R.inspectScopedToken, { query });
    await call(R.revokeScopedToken, { query });
  });

  it('the account: balance, key, usage, a receipt, the models, the document', async () => {
    await call(R.balance);
    await call(R.key);
    await call(R.usage, { query: new URLSearchParams({ group_by: 'model' }) });
    await call(R.receipt, { params: { request_id: receiptId } });
    const models = await call(R.models);
    expect(models.data).toEqual(expect.arrayContaining([expect.objectContaining({ id: CHAT })]));
    await call(R.model, { params: { model: CHAT } });
    await call(R.openApi, { credential: null });
  });

  it('has called every public route', () => {
    expect(agreement.missed(Object.values(R))).toEqual([]);
  });
});
