import { describe, expect, it } from '@jest/globals';
import { GatewayError, validateChatCompletion, validateResponses } from '@gateway/contracts';
import { assertBackgroundServed } from './background-response.js';
import { chatRequestOf, REBUILT_REQUEST_MAX_BYTES, rebuiltChatRequest } from './chat-request-of.js';
import { readerOf } from './conversation.js';
import { normalizeInput } from './input-items.js';
import { messagesOf } from './items-to-messages.js';

const chatOf = (body: Record<string, unknown>) => {
  const request = validateResponses({ model: 'm', ...body });
  return validateChatCompletion(chatRequestOf(request, messagesOf(normalizeInput(request.input))));
};

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, param: error.param };
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('Responses request → chat request', () => {
  it('a string input is one user message; instructions a system message before it', () => {
    const chat = chatOf({ input: 'Hello', instructions: 'Be brief.' });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    ]);
  });

  it('maps the settings a chat model reads and keeps the gateway’s own to itself', () => {
    const chat = chatOf({
      input: 'x',
      max_output_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      service_tier: 'priority',
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_object' }, verbosity: 'low' },
      store: false,
      metadata: { a: 'b' },
      truncation: 'auto',
      include: ['reasoning.encrypted_content'],
      user: 'u1',
    });
    expect(chat).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      max_completion_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      service_tier: 'priority',
      reasoning_effort: 'low',
      response_format: { type: 'json_object' },
      verbosity: 'low',
      user: 'u1',
    });
  });

  it('function tools, tool_choice and a json_schema format take their chat shapes', () => {
    const chat = chatOf({
      input: 'x',
      tools: [
        {
          type: 'function',
          name: 'get',
          description: 'd',
          parameters: { type: 'object' },
          strict: true,
        },
      ],
      tool_choice: { type: 'function', name: 'get' },
      text: {
        format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      },
    });
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get', description: 'd', parameters: { type: 'object' }, strict: true },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get' } });
    expect(chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
    });
  });

  it('a tool round trip: calls join the assistant message before them, outputs become tool messages', () => {
    const chat = chatOf({
      input: [
        { role: 'user', content: 'Weather in Algiers and Oran?' },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Checking.' }],
        },
        { type: 'function_call', call_id: 'c1', name: 'w', arguments: '{"city":"Algiers"}' },
        { type: 'function_call', call_id: 'c2', name: 'w', arguments: '{"city":"Oran"}' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        {
          type: 'function_call_output',
          call_id: 'c2',
          output: [{ type: 'input_text', text: 'windy' }],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Algiers and Oran?' }] },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Algiers"}' } },
          { id: 'c2', type: 'function', function: { name: 'w', arguments: '{"city":"Oran"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'c2', content: 'windy' },
    ]);
  });

  it('images and files go as chat parts; a file URL or an image by file id is refused', () => {
    const chat = chatOf({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
            {
              type: 'input_file',
              file_data: 'data:application/pdf;base64,AAAA',
              filename: 'a.pdf',
            },
          ],
        },
      ],
    });
    expect(chat.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        {
          type: 'file',
          file: { file_data: 'data:application/pdf;base64,AAAA', filename: 'a.pdf' },
        },
      ],
    });
    const file = [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }];
    expect(refusal(() => chatOf({ input: file }))).toEqual({
      code: 'invalid_request_body',
      param: 'input[0].content[0].file_url',
    });
    const image = [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }];
    expect(refusal(() => chatOf({ input: image }))).toEqual({
      code: 'invalid_request_body',
      param: 'input[0].content[0].image_url',
    });
  });

  it('refuses built-in tools, unknown item types and unknown fields, naming them', () => {
    expect(refusal(() => chatOf({ input: 'x', tools: [{ type: 'web_search' }] }))).toEqual({
      code: 'invalid_request_body',
      param: 'tools[0].type',
    });
    expect(refusal(() => chatOf({ input: [{ type: 'computer_call' }] }))).toEqual({
      code: 'invalid_request_body',
      param: 'input[0].type',
    });
    expect(refusal(() => chatOf({ input: 'x', frequency_penalty: 1 }))).toMatchObject({
      code: 'invalid_request_body',
    });
    const background = (body: Record<string, unknown>) => () =>
      assertBackgroundServed(
        validateResponses({ model: 'm', input: 'x', background: true, ...body }),
      );
    expect(refusal(background({ stream: true }))).toEqual({
      code: 'invalid_request_body',
      param: 'stream',
    });
    expect(refusal(background({ store: false }))).toEqual({
      code: 'invalid_request_body',
      param: 'store',
    });
    expect(background({})).not.toThrow();
    expect(refusal(() => validateResponses({ input: 'x' }))).toEqual({
      code: 'missing_model',
      param: 'model',
    });
  });

  it('treats a top-level null as unset (the SDKs send null for defaults)', () => {
    expect(
      chatOf({ input: 'x', temperature: null, previous_response_id: null }).temperature,
    ).toBeUndefined();
  });

  it('gives every input item an id and a type, keeping the ids clients sent', () => {
    const items = normalizeInput([
      { role: 'user', content: 'a' },
      { type: 'function_call_output', call_id: 'c', output: 'o', id: 'fco_mine' },
      { type: 'item_reference', id: 'msg_1' },
    ]);
    expect(items[0]).toMatchObject({
      type: 'message',
      role: 'user',
      id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
    });
    expect(items[1]).toMatchObject({ id: 'fco_mine' });
    expect(items[2]).toEqual({ type: 'item_reference', id: 'msg_1' });
  });
});

describe('readerOf', () => {
  const caller = (kind: 'api_key' | 'scoped_token') => ({
    accountId: 'usr_1',
    kind,
    apiKeyName: 'k',
    webhookFormat: 'A' as const,
    tokenModels: null,
  });

  it('an API key reads the whole account; a token only under its own digest', () => {
    expect(readerOf(caller('api_key'), 'sk_x')).toBeNull();
    expect(readerOf(caller('scoped_token'), 'jwt:abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(readerOf(caller('scoped_token'), 'jwt:abc')).not.toBe(
      readerOf(caller('scoped_token'), 'jwt:abd'),
    );
  });

  it('never widens a token without its credential to the whole account', () => {
    expect(() => readerOf(caller('scoped_token'), undefined)).toThrow();
  });
});

describe('rebuiltChatRequest', () => {
  it('refuses a chain too large for one job before any hold, naming previous_response_id', () => {
    const request = validateResponses({
      model: 'm',
      input: 'next',
      previous_response_id: `resp_${'0'.repeat(32)}`,
    });
    const turn = (i: number) => ({
      id: `msg_${i}`,
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'x'.repeat(1_000_000) }],
    });
    const history = [0, 1, 2, 3, 4].map(turn);
    const input = normalizeInput(request.input);
    expect(refusal(() => rebuiltChatRequest(request, { history, input }))).toEqual({
      code: 'invalid_request_body',
      param: 'previous_response_id',
    });
    const fits = rebuiltChatRequest(request, { history: history.slice(0, 3), input });
    expect(Buffer.byteLength(JSON.stringify(fits))).toBeLessThan(REBUILT_REQUEST_MAX_BYTES);
  });
});
