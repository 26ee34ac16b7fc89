import { describe, expect, it } from '@jest/globals';
import { GatewayError } from './errors.js';
import { LIMITS } from './schemas/limits.js';
import {
  createBodyValidator,
  scopedTokenExpiryS,
  validateChatCompletion,
  validateNativeInference,
  validateScopedTokenCreate,
} from './validation.js';

/** Runs `fn`, expecting a GatewayError; returns it for assertions. */
function caught(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const chat = (extra: Record<string, unknown> = {}) => ({
  model: 'org/model',
  messages: [{ role: 'user', content: 'hello' }],
  ...extra,
});

const CALL = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } };

describe('validateChatCompletion: accepted', () => {
  it.each<[string, Record<string, unknown>]>([
    ['minimal', {}],
    ['temperature 0', { temperature: 0 }],
    ['temperature 2', { temperature: 2 }],
    ['temperature 2.0', { temperature: 2.0 }],
    ['top_p 0', { top_p: 0 }],
    ['top_p 1', { top_p: 1 }],
    ['presence_penalty -2', { presence_penalty: -2 }],
    ['presence_penalty 2', { presence_penalty: 2 }],
    ['frequency_penalty -2', { frequency_penalty: -2 }],
    ['frequency_penalty 2', { frequency_penalty: 2 }],
    ['stop string', { stop: '\n' }],
    ['stop with 4 entries', { stop: ['a', 'b', 'c', 'd'] }],
    ['stop empty array', { stop: [] }],
    ['n 1', { n: 1 }],
    ['n max', { n: LIMITS.nMax }],
    ['max_tokens 1', { max_tokens: 1 }],
    ['max_completion_tokens 1', { max_completion_tokens: 1 }],
    ['both token caps', { max_tokens: 10, max_completion_tokens: 20 }],
    ['stream', { stream: true }],
    ['service_tier priority', { service_tier: 'priority' }],
    ['service_tier default', { service_tier: 'default' }],
    ['service_tier auto', { service_tier: 'auto' }],
    ...['none', 'low', 'medium', 'high', 'xhigh'].map(
      (effort): [string, Record<string, unknown>] => [
        `reasoning_effort ${effort}`,
        { reasoning_effort: effort },
      ],
    ),
    ['response_format', { response_format: { type: 'json_object' } }],
    ['tools and tool_choice object', { tools: [{ type: 'function' }], tool_choice: { type: 'x' } }],
    ['tool_choice string', { tool_choice: 'auto' }],
    ['seed negative', { seed: -42 }],
    ['user', { user: 'end-user-1' }],
    ['logprobs', { logprobs: true }],
    ['parallel_tool_calls', { parallel_tool_calls: false }],
    ['webhook (ignored)', { webhook: 'https://example.com/hook' }],
    ['webhook of any type (ignored)', { webhook: 42 }],
    ['unknown fields (dropped later with warnings)', { usage: true, stream_options: {} }],
    ['message extra fields', { messages: [{ role: 'user', content: 'x', name: 'bob' }] }],
    [
      'text roles',
      {
        messages: ['system', 'developer', 'user', 'assistant'].map((role) => ({
          role,
          content: '',
        })),
      },
    ],
    // What agents send at their second turn, as the client libraries send it.
    [
      'a tool round trip (AI SDK: content null; LangChain: content "" and a named tool result)',
      {
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [CALL] },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          { role: 'assistant', content: '', tool_calls: [CALL] },
          {
            role: 'tool',
            tool_call_id: 'call_1',
            content: [{ type: 'text', text: 'sunny' }],
            name: 'f',
          },
        ],
      },
    ],
    [
      'legacy function call and result',
      {
        messages: [
          { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
          { role: 'function', name: 'f', content: 'sunny' },
          { role: 'function', name: 'f', content: null },
        ],
      },
    ],
    [
      'assistant refusal and parts',
      {
        messages: [
          { role: 'assistant', content: null, refusal: 'no', tool_calls: [CALL] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'a' },
              { type: 'refusal', refusal: 'b' },
            ],
          },
        ],
      },
    ],
    [
      'user content parts of every type',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://img.example/a.png', detail: 'low' } },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
              { type: 'file', file: { file_data: 'JVBERi0=', filename: 'a.pdf' } },
              { type: 'file', file: { file_id: 'file-1' } },
            ],
          },
        ],
      },
    ],
    [
      'cost-free reference parameters',
      {
        store: false,
        metadata: { team: 'a' },
        prompt_cache_key: 'k',
        safety_identifier: 'user-hash',
        verbosity: 'low',
      },
    ],
    [
      'max messages',
      {
        messages: Array.from({ length: LIMITS.messagesMaxItems }, () => ({
          role: 'user',
          content: 'x',
        })),
      },
    ],
  ])('%s', (_name, extra) => {
    const body = chat(extra);
    expect(validateChatCompletion(body)).toBe(body);
  });

  it('neither mutates nor fills defaults', () => {
    const body = chat();
    const before = JSON.stringify(body);
    validateChatCompletion(body);
    expect(JSON.stringify(body)).toBe(before);
  });
});

describe('validateChatCompletion: missing_model', () => {
  it.each<[string, unknown, RegExp]>([
    ['empty object', {}, /model is required/],
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, /model is required/],
    ['model number', chat({ model: 42 }), /model must be a string/],
    ['model null', chat({ model: null }), /model must be a string/],
    ['model array', chat({ model: ['a'] }), /model must be a string/],
    ['null body', null, /JSON object/],
    ['array body', [chat()], /JSON object/],
    ['string body', 'org/model', /JSON object/],
    ['number body', 1, /JSON object/],
  ])('%s', (_name, body, message) => {
    const error = caught(() => validateChatCompletion(body));
    expect(error.code).toBe('missing_model');
    expect(error.status).toBe(400);
    expect(error.param).toBe('model');
    expect(error.message).toMatch(message);
  });

  it('wins over other errors', () => {
    const error = caught(() => validateChatCompletion({ temperature: 9, messages: 'x' }));
    expect(error.code).toBe('missing_model');
  });
});

describe('validateChatCompletion: invalid_request_body', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['model empty', { model: '' }, 'model', 'model must not be empty'],
    [
      'model too long',
      { model: 'm'.repeat(LIMITS.modelIdMaxLength + 1) },
      'model',
      'model must be at most 256 characters long',
    ],
    ['messages missing', { messages: undefined }, 'messages', 'messages is required'],
    ['messages empty', { messages: [] }, 'messages', 'messages must have at least 1 item(s)'],
    ['messages not array', { messages: 'hi' }, 'messages', 'messages must be an array'],
    [
      'too many messages',
      {
        messages: Array.from({ length: LIMITS.messagesMaxItems + 1 }, () => ({
          role: 'user',
          content: 'x',
        })),
      },
      'messages',
      'messages must have at most 2048 item(s)',
    ],
    ['message not object', { messages: ['hi'] }, 'messages[0]', 'messages[0] must be an object'],
    [
      'role unknown',
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'robot', content: 'b' },
        ],
      },
      'messages[1].role',
      'messages[1].role must be one of: system, developer, user, assistant, tool, function',
    ],
    [
      'role number',
      { messages: [{ role: 1, content: 'a' }] },
      'messages[0].role',
      'messages[0].role must be a string',
    ],
    [
      'tool result without tool_call_id',
      { messages: [{ role: 'tool', content: 'b' }] },
      'messages[0].tool_call_id',
      'messages[0].tool_call_id is required',
    ],
    [
      'assistant with neither content nor calls',
      { messages: [{ role: 'assistant', content: null }] },
      'messages[0].content',
      'messages[0].content is required unless tool_calls or function_call is present',
    ],
    [
      'tool call of another type',
      {
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 'c', type: 'custom', function: { name: 'f', arguments: '{}' } }],
          },
        ],
      },
      'messages[0].tool_calls[0].type',
      'messages[0].tool_calls[0].type must be "function"',
    ],
    [
      'tool call without arguments',
      {
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f' } }],
          },
        ],
      },
      'messages[0].tool_calls[0].function.arguments',
      'messages[0].tool_calls[0].function.arguments is required',
    ],
    [
      'image part in a system message',
      { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] },
      'messages[0].content[0].type',
      'messages[0].content[0].type must be one of: text',
    ],
    [
      'unknown part type',
      { messages: [{ role: 'user', content: [{ type: 'video_url', video_url: {} }] }] },
      'messages[0].content[0].type',
      'messages[0].content[0].type must be one of: text, image_url, input_audio, file',
    ],
    [
      'text part without text',
      { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      'messages[0].content[0].text',
      'messages[0].content[0].text is required',
    ],
    [
      'image URL of another scheme',
      {
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/x' } }] },
        ],
      },
      'messages[0].content[0].image_url.url',
      'messages[0].content[0].image_url.url must be a data:image/...;base64 URL or an absolute http(s) URL',
    ],
    [
      'image detail unknown',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AA', detail: 'max' } },
            ],
          },
        ],
      },
      'messages[0].content[0].image_url.detail',
      'messages[0].content[0].image_url.detail must be one of: auto, low, high',
    ],
    [
      'too many parts',
      {
        messages: [
          {
            role: 'user',
            content: Array.from({ length: LIMITS.contentPartsMaxItems + 1 }, () => ({
              type: 'text',
              text: 'x',
            })),
          },
        ],
      },
      'messages[0].content',
      `messages[0].content must have at most ${LIMITS.contentPartsMaxItems} item(s)`,
    ],
    [
      'too many media parts',
      {
        messages: [
          {
            role: 'user',
            content: Array.from({ length: LIMITS.mediaPartsMaxItems + 1 }, () => ({
              type: 'image_url',
              image_url: { url: 'data:image/png;base64,AA' },
            })),
          },
        ],
      },
      `messages[0].content[${LIMITS.mediaPartsMaxItems}]`,
      `a request may carry at most ${LIMITS.mediaPartsMaxItems} image, audio and file parts`,
    ],
    [
      'data URL too long',
      {
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'image_url',
                image_url: {
                  url: `data:image/png;base64,${'A'.repeat(LIMITS.dataUrlMaxLength)}`,
                },
              },
            ],
          },
        ],
      },
      'messages[0].content[0].image_url.url',
      `messages[0].content[0].image_url.url must be at most ${LIMITS.dataUrlMaxLength} characters long`,
    ],
    [
      'audio of another format',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'ogg' } }],
          },
        ],
      },
      'messages[0].content[0].input_audio.format',
      'messages[0].content[0].input_audio.format must be one of: wav, mp3',
    ],
    [
      'verbosity unknown',
      { verbosity: 'loud' },
      'verbosity',
      'verbosity must be one of: low, medium, high',
    ],
    [
      'metadata value not a string',
      { metadata: { a: 1 } },
      'metadata.a',
      'metadata.a must be a string',
    ],
    ['store string', { store: 'yes' }, 'store', 'store must be a boolean'],
    [
      'role missing',
      { messages: [{ content: 'a' }] },
      'messages[0].role',
      'messages[0].role is required',
    ],
    [
      'content missing',
      { messages: [{ role: 'user' }] },
      'messages[0].content',
      'messages[0].content is required',
    ],
    [
      'content number',
      { messages: [{ role: 'user', content: 5 }] },
      'messages[0].content',
      'messages[0].content must be a string or an array of objects',
    ],
    ['temperature -0.0001', { temperature: -0.0001 }, 'temperature', 'temperature must be >= 0'],
    ['temperature 2.0001', { temperature: 2.0001 }, 'temperature', 'temperature must be <= 2'],
    ['temperature string', { temperature: '1' }, 'temperature', 'temperature must be a number'],
    ['top_p -0.0001', { top_p: -0.0001 }, 'top_p', 'top_p must be >= 0'],
    ['top_p 1.0001', { top_p: 1.0001 }, 'top_p', 'top_p must be <= 1'],
    [
      'presence_penalty -2.0001',
      { presence_penalty: -2.0001 },
      'presence_penalty',
      'presence_penalty must be >= -2',
    ],
    [
      'presence_penalty 2.0001',
      { presence_penalty: 2.0001 },
      'presence_penalty',
      'presence_penalty must be <= 2',
    ],
    [
      'frequency_penalty -2.0001',
      { frequency_penalty: -2.0001 },
      'frequency_penalty',
      'frequency_penalty must be >= -2',
    ],
    [
      'frequency_penalty 2.0001',
      { frequency_penalty: 2.0001 },
      'frequency_penalty',
      'frequency_penalty must be <= 2',
    ],
    [
      'stop with 5 entries',
      { stop: ['a', 'b', 'c', 'd', 'e'] },
      'stop',
      'stop must have at most 4 item(s)',
    ],
    ['stop number', { stop: 5 }, 'stop', 'stop must be a string or an array of strings'],
    ['stop entry number', { stop: ['a', 1] }, 'stop[1]', 'stop[1] must be a string'],
    [
      'stop sequence too long',
      { stop: 'x'.repeat(LIMITS.stopSequenceMaxLength + 1) },
      'stop',
      'stop must be at most 1024 characters long',
    ],
    ['n 0', { n: 0 }, 'n', 'n must be >= 1'],
    ['n above max', { n: LIMITS.nMax + 1 }, 'n', 'n must be <= 16'],
    ['n fractional', { n: 1.5 }, 'n', 'n must be an integer'],
    ['max_tokens 0', { max_tokens: 0 }, 'max_tokens', 'max_tokens must be >= 1'],
    ['max_tokens string', { max_tokens: '5' }, 'max_tokens', 'max_tokens must be an integer'],
    [
      'max_tokens above int32',
      { max_tokens: 2 ** 31 },
      'max_tokens',
      'max_tokens must be <= 2147483647',
    ],
    [
      'max_completion_tokens 0',
      { max_completion_tokens: 0 },
      'max_completion_tokens',
      'max_completion_tokens must be >= 1',
    ],
    ['stream string', { stream: 'true' }, 'stream', 'stream must be a boolean'],
    [
      'service_tier flex',
      { service_tier: 'flex' },
      'service_tier',
      'service_tier must be one of: auto, default, priority',
    ],
    [
      'reasoning_effort max',
      { reasoning_effort: 'max' },
      'reasoning_effort',
      'reasoning_effort must be one of: none, low, medium, high, xhigh',
    ],
    [
      'reasoning_effort number',
      { reasoning_effort: 1 },
      'reasoning_effort',
      'reasoning_effort must be a string',
    ],
    [
      'response_format string',
      { response_format: 'json' },
      'response_format',
      'response_format must be an object',
    ],
    ['tools object', { tools: {} }, 'tools', 'tools must be an array'],
    ['tools entry string', { tools: ['f'] }, 'tools[0]', 'tools[0] must be an object'],
    [
      'tool_choice number',
      { tool_choice: 1 },
      'tool_choice',
      'tool_choice must be a string or an object',
    ],
    ['seed fractional', { seed: 1.5 }, 'seed', 'seed must be an integer'],
    ['seed unsafe', { seed: 2 ** 53 }, 'seed', 'seed must be <= 9007199254740991'],
    ['user number', { user: 5 }, 'user', 'user must be a string'],
    ['logprobs string', { logprobs: 'yes' }, 'logprobs', 'logprobs must be a boolean'],
    [
      'parallel_tool_calls number',
      { parallel_tool_calls: 1 },
      'parallel_tool_calls',
      'parallel_tool_calls must be a boolean',
    ],
  ])('%s', (_name, extra, param, message) => {
    const error = caught(() => validateChatCompletion(chat(extra)));
    expect(error.code).toBe('invalid_request_body');
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
  });

  it('reports the first error in schema order, deterministically', () => {
    const body = chat({ top_p: 5, temperature: 5, messages: [{ role: 'bad', content: 1 }] });
    const first = caught(() => validateChatCompletion(body));
    expect(first.param).toBe('messages[0].role');
    const again = caught(() => validateChatCompletion(body));
    expect(again.param).toBe(first.param);
    expect(again.message).toBe(first.message);
    expect(caught(() => validateChatCompletion(chat({ top_p: 5, temperature: 5 }))).param).toBe(
      'temperature',
    );
  });

  it('never echoes values in messages', () => {
    const secret = 'sk-very-secret-prompt-text';
    const cases = [
      chat({ model: secret, temperature: secret }),
      chat({ messages: [{ role: secret, content: secret }] }),
      chat({ stop: [secret, secret, secret, secret, secret] }),
      chat({ reasoning_effort: secret }),
      chat({ user: 42, webhook: secret }),
    ];
    for (const body of cases) {
      const error = caught(() => validateChatCompletion(body));
      expect(error.message).not.toContain(secret);
      expect(JSON.stringify(error.param)).not.toContain(secret);
    }
  });
});

describe('validateNativeInference', () => {
  it.each<[string, Record<string, unknown>]>([
    ['input', { input: 'hello' }],
    ['empty input', { input: '' }],
    ['inputs', { inputs: ['a', 'b'] }],
    [
      'parameters at the edges, other keys allowed',
      { input: 'x', parameters: { max_new_tokens: 1, temperature: 0, top_k: 5 } },
    ],
    ['temperature 2', { input: 'x', parameters: { temperature: 2 } }],
    ['stop with 4 entries', { input: 'x', stop: ['a', 'b', 'c', 'd'] }],
    ['https webhook', { input: 'x', webhook: 'https://hooks.example.com/in?x=1' }],
    ['http webhook (policy checked by edge)', { input: 'x', webhook: 'http://127.0.0.1:8080/h' }],
  ])('accepts %s', (_name, body) => {
    expect(validateNativeInference(body)).toBe(body);
  });

  it.each<[string, unknown, string | undefined, string]>([
    ['empty object', {}, undefined, 'one of input or inputs is required'],
    ['only parameters', { parameters: {} }, undefined, 'one of input or inputs is required'],
    ['both', { input: 'a', inputs: ['b'] }, 'inputs', 'input and inputs are mutually exclusive'],
    ['null body', null, undefined, 'request body must be a JSON object'],
    ['array body', [{ input: 'a' }], undefined, 'request body must be a JSON object'],
    ['input number', { input: 5 }, 'input', 'input must be a string'],
    ['inputs string', { inputs: 'a' }, 'inputs', 'inputs must be an array'],
    ['inputs empty', { inputs: [] }, 'inputs', 'inputs must have at least 1 item(s)'],
    ['inputs entry number', { inputs: ['a', 2] }, 'inputs[1]', 'inputs[1] must be a string'],
    [
      'parameters string',
      { input: 'x', parameters: 'p' },
      'parameters',
      'parameters must be an object',
    ],
    [
      'max_new_tokens 0',
      { input: 'x', parameters: { max_new_tokens: 0 } },
      'parameters.max_new_tokens',
      'parameters.max_new_tokens must be >= 1',
    ],
    [
      'max_new_tokens fractional',
      { input: 'x', parameters: { max_new_tokens: 2.5 } },
      'parameters.max_new_tokens',
      'parameters.max_new_tokens must be an integer',
    ],
    [
      'temperature 2.0001',
      { input: 'x', parameters: { temperature: 2.0001 } },
      'parameters.temperature',
      'parameters.temperature must be <= 2',
    ],
    [
      'temperature -0.0001',
      { input: 'x', parameters: { temperature: -0.0001 } },
      'parameters.temperature',
      'parameters.temperature must be >= 0',
    ],
    [
      'stop with 5 entries',
      { input: 'x', stop: ['a', 'b', 'c', 'd', 'e'] },
      'stop',
      'stop must have at most 4 item(s)',
    ],
    ['stop string', { input: 'x', stop: 'a' }, 'stop', 'stop must be an array'],
    [
      'webhook not a URL',
      { input: 'x', webhook: 'not a url' },
      'webhook',
      'webhook must be an absolute http(s) URL',
    ],
    [
      'webhook ftp',
      { input: 'x', webhook: 'ftp://example.com/' },
      'webhook',
      'webhook must be an absolute http(s) URL',
    ],
    [
      'webhook without host',
      { input: 'x', webhook: 'https://' },
      'webhook',
      'webhook must be an absolute http(s) URL',
    ],
    ['webhook number', { input: 'x', webhook: 1 }, 'webhook', 'webhook must be a string'],
    [
      'misspelt webhook',
      { input: 'x', webhok: 'https://example.com' },
      'webhok',
      'webhok is not a supported field',
    ],
  ])('rejects %s', (_name, body, param, message) => {
    const error = caught(() => validateNativeInference(body));
    expect(error.code).toBe('invalid_request_body');
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
  });

  it('clips long unknown field names', () => {
    const error = caught(() => validateNativeInference({ input: 'x', ['k'.repeat(500)]: 1 }));
    expect(error.param?.length).toBeLessThan(100);
  });
});

describe('validateScopedTokenCreate', () => {
  const nowS = 1_750_000_000;
  const year = LIMITS.scopedTokenMaxLifetimeS;

  it.each<[string, Record<string, unknown>]>([
    ['name only', { api_key_name: 'auto' }],
    ['models', { api_key_name: 'auto', models: ['org/a', 'org/b'] }],
    ['expires_delta 1', { api_key_name: 'auto', expires_delta: 1 }],
    ['expires_delta 1 year', { api_key_name: 'auto', expires_delta: year }],
    ['expires_at', { api_key_name: 'auto', expires_at: nowS + 60 }],
    ['expires_at exactly 1 year ahead', { api_key_name: 'auto', expires_at: nowS + year }],
    ['spending_limit 0', { api_key_name: 'auto', spending_limit: 0 }],
    ['spending_limit 12.5', { api_key_name: 'auto', spending_limit: 12.5 }],
    ['spending_limit 1 µDZD', { api_key_name: 'auto', spending_limit: 0.000001 }],
  ])('accepts %s', (_name, body) => {
    expect(validateScopedTokenCreate(body, { nowS })).toBe(body);
  });

  it.each<[string, unknown, string | undefined, string]>([
    ['null body', null, undefined, 'request body must be a JSON object'],
    ['name missing', { models: ['m'] }, 'api_key_name', 'api_key_name is required'],
    ['name empty', { api_key_name: '' }, 'api_key_name', 'api_key_name must not be empty'],
    ['name number', { api_key_name: 1 }, 'api_key_name', 'api_key_name must be a string'],
    ['models empty', { models: [] }, 'models', 'models must have at least 1 item(s)'],
    ['models string', { models: 'org/a' }, 'models', 'models must be an array'],
    ['models entry empty', { models: [''] }, 'models[0]', 'models[0] must not be empty'],
    ['expires_delta 0', { expires_delta: 0 }, 'expires_delta', 'expires_delta must be >= 1'],
    [
      'expires_delta over 1 year',
      { expires_delta: year + 1 },
      'expires_delta',
      'expires_delta must be <= 31536000',
    ],
    [
      'expires_delta fractional',
      { expires_delta: 1.5 },
      'expires_delta',
      'expires_delta must be an integer',
    ],
    [
      'both expiries',
      { expires_delta: 60, expires_at: nowS + 60 },
      'expires_at',
      'expires_delta and expires_at are mutually exclusive',
    ],
    [
      'expires_at in the past',
      { expires_at: nowS },
      'expires_at',
      'expires_at must be in the future',
    ],
    [
      'expires_at beyond 1 year',
      { expires_at: nowS + year + 1 },
      'expires_at',
      'expires_at must be at most 31536000 seconds (1 year) ahead',
    ],
    [
      'expires_at in milliseconds',
      { expires_at: nowS * 1000 },
      'expires_at',
      'expires_at must be at most 31536000 seconds (1 year) ahead',
    ],
    [
      'spending_limit negative',
      { spending_limit: -0.01 },
      'spending_limit',
      'spending_limit must be >= 0',
    ],
    [
      'spending_limit 7 decimals',
      { spending_limit: 0.0000001 },
      'spending_limit',
      'spending_limit must have at most 6 decimal places',
    ],
    [
      'spending_limit string',
      { spending_limit: '10' },
      'spending_limit',
      'spending_limit must be a number',
    ],
    [
      'spending_limit too large',
      { spending_limit: LIMITS.spendingLimitMaxDzd + 1 },
      'spending_limit',
      'spending_limit must be <= 1000000000',
    ],
    [
      'misspelt spending_limit',
      { spendinglimit: 10 },
      'spendinglimit',
      'spendinglimit is not a supported field',
    ],
  ])('rejects %s', (_name, extra, param, message) => {
    // Bodies get a valid api_key_name unless the case is about that field.
    const body =
      typeof extra === 'object' && extra !== null && !/^name /.test(_name)
        ? { api_key_name: 'auto', ...extra }
        : extra;
    const error = caught(() => validateScopedTokenCreate(body, { nowS }));
    expect(error.code).toBe('invalid_request_body');
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
  });

  it('checks expires_at against the clock only when given one', () => {
    expect(validateScopedTokenCreate({ api_key_name: 'a', expires_at: 1 }).expires_at).toBe(1);
  });

  it('computes the token expiry', () => {
    expect(scopedTokenExpiryS({ api_key_name: 'a' }, nowS)).toBe(nowS + year);
    expect(scopedTokenExpiryS({ api_key_name: 'a', expires_delta: 60 }, nowS)).toBe(nowS + 60);
    expect(scopedTokenExpiryS({ api_key_name: 'a', expires_at: nowS + 5 }, nowS)).toBe(nowS + 5);
  });
});

describe('createBodyValidator', () => {
  const validateName = createBodyValidator<{ name: string }>({
    type: 'object',
    properties: { name: { type: 'string', minLength: 1 } },
    required: ['name'],
    additionalProperties: false,
  });

  it('returns the typed body or throws invalid_request_body', () => {
    expect(validateName({ name: 'acme' }).name).toBe('acme');
    const error = caught(() => validateName({ name: '' }));
    expect(error.code).toBe('invalid_request_body');
    expect(error.param).toBe('name');
    expect(caught(() => validateName('x')).message).toBe('request body must be a JSON object');
  });
});
