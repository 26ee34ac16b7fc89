import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens } from '@gateway/tokenizer';
import { standInAnswer } from './answer.js';
import { textPromptTokens } from './chat-stream.suite.js';
import { postJson } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';

let node: StandInModelNode;
const url = () => `${node.url}/v1/chat/completions`;
const chat = (messages: unknown[]) => postJson(url(), { model: 'm', messages });
const tokens = (...texts: string[]) => texts.reduce((sum, t) => sum + countTextTokens(t), 0);
const AUDIO_BASE64 = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=';
const FILE_BASE64 = 'JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iago=';

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});
afterAll(() => node.close());

const image = (detail?: string) => ({
  type: 'image_url',
  image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', ...(detail ? { detail } : {}) },
});

describe('stand-in model node: the reference chat message schema', () => {
  it('accepts every role and content part, and bills each field the model reads', async () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } };
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
      {
        role: 'user',
        name: 'amina',
        content: [
          { type: 'text', text: 'Look at these.' },
          image('low'),
          image('high'),
          { type: 'input_audio', input_audio: { data: AUDIO_BASE64, format: 'wav' } },
          { type: 'file', file: { file_data: FILE_BASE64, filename: 'a.pdf' } },
          { type: 'file', file: { file_id: 'file-123' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] },
      { role: 'assistant', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '42' }] },
      { role: 'assistant', content: null, function_call: { name: 'g', arguments: '{}' } },
      { role: 'function', name: 'g', content: 'done' },
      { role: 'user', content: 'And now?' },
    ];
    const res = await chat(messages);
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe(standInAnswer('And now?'));
    const framing = 3 * messages.length;
    const roles = tokens(...messages.map((m) => m.role));
    const texts = tokens('Be brief.', 'Use French.', 'amina', 'Look at these.', 'I cannot.');
    const media = 85 + 765 + Math.ceil(AUDIO_BASE64.length / 8) + Math.ceil(FILE_BASE64.length / 8);
    const calls = tokens('f', '{"a":1}', 'call_1', '42', 'g', '{}', 'g', 'done', 'And now?');
    expect(res.body.usage.prompt_tokens).toBe(framing + roles + texts + media + calls);
  });

  it('bills an image 85 tokens at low detail, 765 otherwise', async () => {
    const withImage = (detail?: string) => [
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, image(detail)] },
    ];
    const text = textPromptTokens([{ role: 'user', content: 'What is this?' }]);
    const usage = async (detail?: string) =>
      (await chat(withImage(detail))).body.usage.prompt_tokens as number;
    expect(await usage('low')).toBe(text + 85);
    expect(await usage('high')).toBe(text + 765);
    expect(await usage('auto')).toBe(text + 765);
    expect(await usage()).toBe(text + 765);
  });

  it('refuses messages of the wrong shape, naming the field', async () => {
    const cases: [unknown, string][] = [
      ['hello', 'messages[0]'],
      [{ role: 'robot', content: 'x' }, 'messages[0].role'],
      [{ role: 'user' }, 'messages[0].content'],
      [{ role: 'user', content: 7 }, 'messages[0].content'],
      [{ role: 'user', content: [{ type: 'video', video: {} }] }, 'messages[0].content[0].type'],
      [{ role: 'user', content: [{ type: 'text' }] }, 'messages[0].content[0].text'],
      [{ role: 'user', content: [{ type: 'image_url' }] }, 'messages[0].content[0].image_url'],
      [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'u', detail: 'max' } }] },
        'messages[0].content[0].image_url.detail',
      ],
      [
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA' } }] },
        'messages[0].content[0].input_audio.format',
      ],
      [{ role: 'tool', content: 'r' }, 'messages[0].tool_call_id'],
      [{ role: 'function', content: 'r' }, 'messages[0].name'],
      [{ role: 'assistant', tool_calls: {} }, 'messages[0].tool_calls'],
      [
        { role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'f' } }] },
        'messages[0].tool_calls[0].function.arguments',
      ],
    ];
    for (const [message, param] of cases) {
      const res = await chat([message]);
      expect([res.status, res.body.error?.param]).toEqual([400, param]);
    }
  });
});
