import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/**
 * Every range and type rule at its edges. A valid body reaches admission, which refuses the
 * model (not in the catalog: 404), so "valid" shows as 404 model_not_found and "invalid" as 400
 * naming the field.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenant: FundedAccount;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { uploadBytes: 1024 });
  tenant = await fundAccount(billing.operator, { rateLimitPerMinute: 100_000 });
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

type Case = [string, Record<string, unknown>, 'valid' | string];

async function expectOutcome(path: string, body: unknown, expected: string) {
  const response = await edge.api
    .post(path)
    .set(bearer(tenant.apiKey))
    .send(body as object);
  if (expected === 'valid') {
    expect({ status: response.status, body: response.body }).toMatchObject({
      status: 404,
      body: { error: { code: 'model_not_found' } },
    });
  } else {
    expect({ status: response.status, body: response.body }).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request_body' } },
    });
    // 'no param': an object-level rule ("one of input or inputs is required").
    expect(response.body.error.param).toBe(expected === 'no param' ? undefined : expected);
  }
}

const messages = [{ role: 'user', content: 'Hi' }];
const chatBase = { model: 'acme/none', messages };

const CHAT_CASES: Case[] = [
  ['temperature 0', { temperature: 0 }, 'valid'],
  ['temperature 2', { temperature: 2 }, 'valid'],
  ['temperature -0.01', { temperature: -0.01 }, 'temperature'],
  ['temperature 2.01', { temperature: 2.01 }, 'temperature'],
  ['temperature "1"', { temperature: '1' }, 'temperature'],
  ['top_p 0 and 1', { top_p: 1 }, 'valid'],
  ['top_p 1.01', { top_p: 1.01 }, 'top_p'],
  ['presence_penalty -2', { presence_penalty: -2 }, 'valid'],
  ['presence_penalty 2', { presence_penalty: 2 }, 'valid'],
  ['presence_penalty -2.01', { presence_penalty: -2.01 }, 'presence_penalty'],
  ['frequency_penalty 2.01', { frequency_penalty: 2.01 }, 'frequency_penalty'],
  ['frequency_penalty -2', { frequency_penalty: -2 }, 'valid'],
  ['4 stop sequences', { stop: ['a', 'b', 'c', 'd'] }, 'valid'],
  ['5 stop sequences', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ['stop as a string', { stop: 'END' }, 'valid'],
  ['stop as a number', { stop: 5 }, 'stop'],
  ['n 1', { n: 1 }, 'valid'],
  ['n 16', { n: 16 }, 'valid'],
  ['n 0', { n: 0 }, 'n'],
  ['n 17', { n: 17 }, 'n'],
  ['n 1.5', { n: 1.5 }, 'n'],
  ['max_tokens 1', { max_tokens: 1 }, 'valid'],
  ['max_tokens 0', { max_tokens: 0 }, 'max_tokens'],
  ['max_completion_tokens 0', { max_completion_tokens: 0 }, 'max_completion_tokens'],
  ['stream "yes"', { stream: 'yes' }, 'stream'],
  ['service_tier priority', { service_tier: 'priority' }, 'valid'],
  ['service_tier turbo', { service_tier: 'turbo' }, 'service_tier'],
  ['reasoning_effort xhigh', { reasoning_effort: 'xhigh' }, 'valid'],
  ['reasoning_effort max', { reasoning_effort: 'max' }, 'reasoning_effort'],
  ['webhook ignored', { webhook: 'https://example.com/hook' }, 'valid'],
  ['unknown fields pass (external allowlist drops them)', { foo: 1 }, 'valid'],
  ['no messages', { messages: [] }, 'messages'],
  ['role unknown', { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
  [
    'tool result without its call id',
    { messages: [{ role: 'tool', content: 'x' }] },
    'messages[0].tool_call_id',
  ],
  [
    'a tool round trip',
    {
      messages: [
        { role: 'developer', content: 'd' },
        { role: 'user', content: [{ type: 'text', text: 'u' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c', content: 'r' },
      ],
    },
    'valid',
  ],
  ['content not a string', { messages: [{ role: 'user', content: 3 }] }, 'messages[0].content'],
  [
    'roles system/user/assistant',
    {
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    },
    'valid',
  ],
  ['response_format an object', { response_format: { type: 'json_object' } }, 'valid'],
  ['response_format a string', { response_format: 'json' }, 'response_format'],
  ['tools an array', { tools: [{ type: 'function' }] }, 'valid'],
  ['seed not an integer', { seed: 1.5 }, 'seed'],
];

describe('POST /v1/chat/completions', () => {
  it.each(CHAT_CASES)('%s', async (_name, patch, expected) => {
    await expectOutcome('/v1/chat/completions', { ...chatBase, ...patch }, expected);
  });

  it('missing or non-string model, or a non-object body: missing_model', async () => {
    for (const body of [{ messages }, { model: null, messages }, [chatBase]]) {
      const response = await edge.api
        .post('/v1/chat/completions')
        .set(bearer(tenant.apiKey))
        .send(body);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'missing_model', param: 'model' });
    }
  });
});

const NATIVE_CASES: Case[] = [
  ['input', { input: 'hello' }, 'valid'],
  ['inputs', { inputs: ['a', 'b'] }, 'valid'],
  ['input and inputs', { input: 'a', inputs: ['b'] }, 'inputs'],
  ['neither input nor inputs', { parameters: {} }, 'no param'],
  ['empty inputs', { inputs: [] }, 'inputs'],
  ['max_new_tokens 1', { input: 'x', parameters: { max_new_tokens: 1 } }, 'valid'],
  [
    'max_new_tokens 0',
    { input: 'x', parameters: { max_new_tokens: 0 } },
    'parameters.max_new_tokens',
  ],
  ['parameters.temperature 2', { input: 'x', parameters: { temperature: 2 } }, 'valid'],
  [
    'parameters.temperature 2.5',
    { input: 'x', parameters: { temperature: 2.5 } },
    'parameters.temperature',
  ],
  [
    'TGI sampling parameters',
    {
      input: 'x',
      parameters: { top_k: 5, top_p: 0.9, typical_p: 0.5, repetition_penalty: 1.1, seed: 7 },
    },
    'valid',
  ],
  ['parameters.do_sample', { input: 'x', parameters: { do_sample: true } }, 'valid'],
  ['parameters.best_of', { input: 'x', parameters: { best_of: 4 } }, 'parameters.best_of'],
  ['parameters.details', { input: 'x', parameters: { details: false } }, 'parameters.details'],
  ['parameters.top_k 0', { input: 'x', parameters: { top_k: 0 } }, 'parameters.top_k'],
  ['4 stop sequences', { input: 'x', stop: ['a', 'b', 'c', 'd'] }, 'valid'],
  ['5 stop sequences', { input: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ['misspelt webhook', { input: 'x', webhok: 'https://a.example' }, 'webhok'],
  ['webhook not a URL', { input: 'x', webhook: 'not a url' }, 'webhook'],
  ['webhook over http', { input: 'x', webhook: 'http://hooks.example.com/x' }, 'webhook'],
  [
    'webhook with credentials',
    { input: 'x', webhook: 'https://u:p@hooks.example.com/' },
    'webhook',
  ],
  ['webhook over https', { input: 'x', webhook: 'https://hooks.example.com/x' }, 'valid'],
];

describe('POST /v1/inference/{model}', () => {
  it.each(NATIVE_CASES)('%s', async (_name, body, expected) => {
    await expectOutcome('/v1/inference/acme/none', body, expected);
  });
});

const MEDIA_CASES: [string, string, Record<string, unknown>, string][] = [
  ['/v1/embeddings', 'string input', { input: 'a' }, 'valid'],
  ['/v1/embeddings', 'array input', { input: ['a', 'b'] }, 'valid'],
  ['/v1/embeddings', 'empty array', { input: [] }, 'input'],
  ['/v1/embeddings', 'numbers', { input: [1, 2] }, 'input[0]'],
  ['/v1/embeddings', 'base64 encoding', { input: 'a', encoding_format: 'base64' }, 'valid'],
  ['/v1/embeddings', 'unknown field', { input: 'a', webhook: 'https://x.example' }, 'webhook'],
  ['/v1/images/generations', 'n 10', { prompt: 'cat', n: 10 }, 'valid'],
  ['/v1/images/generations', 'n 11', { prompt: 'cat', n: 11 }, 'n'],
  ['/v1/images/generations', 'n 0', { prompt: 'cat', n: 0 }, 'n'],
  ['/v1/images/generations', 'size 1024x1024', { prompt: 'cat', size: '1024x1024' }, 'valid'],
  ['/v1/images/generations', 'size huge', { prompt: 'cat', size: 'huge' }, 'size'],
  ['/v1/images/generations', 'empty prompt', { prompt: '' }, 'prompt'],
  ['/v1/audio/speech', 'speed 0.25', { input: 'hi', voice: 'alloy', speed: 0.25 }, 'valid'],
  ['/v1/audio/speech', 'speed 4', { input: 'hi', voice: 'alloy', speed: 4 }, 'valid'],
  ['/v1/audio/speech', 'speed 0.24', { input: 'hi', voice: 'alloy', speed: 0.24 }, 'speed'],
  ['/v1/audio/speech', 'speed 4.01', { input: 'hi', voice: 'alloy', speed: 4.01 }, 'speed'],
  ['/v1/audio/speech', 'no voice', { input: 'hi' }, 'voice'],
  [
    '/v1/audio/speech',
    'format ogg',
    { input: 'hi', voice: 'a', response_format: 'ogg' },
    'response_format',
  ],
  ['/v1/video/generations', 'seconds 60', { prompt: 'sea', seconds: 60 }, 'valid'],
  ['/v1/video/generations', 'seconds 61', { prompt: 'sea', seconds: 61 }, 'seconds'],
  ['/v1/rerank', 'documents', { query: 'q', documents: ['a'], top_n: 1 }, 'valid'],
  ['/v1/rerank', 'no documents', { query: 'q', documents: [] }, 'documents'],
  ['/v1/rerank', 'top_n 0', { query: 'q', documents: ['a'], top_n: 0 }, 'top_n'],
];

describe('other routes', () => {
  it.each(MEDIA_CASES)('%s: %s', async (path, _name, body, expected) => {
    await expectOutcome(path, { model: 'acme/none', ...body }, expected);
  });

  it('missing model on the other routes: missing_model', async () => {
    const response = await edge.api
      .post('/v1/rerank')
      .set(bearer(tenant.apiKey))
      .send({ query: 'q' });
    expect(response.body.error).toMatchObject({ code: 'missing_model', param: 'model' });
  });
});

describe('POST /v1/audio/transcriptions (multipart)', () => {
  const upload = (fields: Record<string, string>, file?: Buffer) => {
    const req = edge.api.post('/v1/audio/transcriptions').set(bearer(tenant.apiKey));
    for (const [name, value] of Object.entries(fields)) req.field(name, value);
    if (file) req.attach('file', file, { filename: 'a.wav', contentType: 'audio/wav' });
    return req;
  };

  it('checks its fields at their edges', async () => {
    const valid = await upload({ model: 'acme/none', temperature: '1' }, Buffer.from('RIFF'));
    expect(valid.status).toBe(404);
    const hot = await upload({ model: 'acme/none', temperature: '1.01' }, Buffer.from('RIFF'));
    expect(hot.body.error).toMatchObject({ code: 'invalid_request_body', param: 'temperature' });
    const noFile = await upload({ model: 'acme/none' });
    expect(noFile.body.error).toMatchObject({ code: 'invalid_request_body', param: 'file' });
    const noModel = await upload({}, Buffer.from('RIFF'));
    expect(noModel.body.error.code).toBe('missing_model');
  });

  it('limits the upload size (413) and wants multipart (415)', async () => {
    const big = await upload({ model: 'acme/none' }, Buffer.alloc(2048));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    const json = await edge.api
      .post('/v1/audio/transcriptions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/none' });
    expect(json.status).toBe(415);
  });
});
