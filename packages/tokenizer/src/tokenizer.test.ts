import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import {
  estimateChatRequestTokens,
  countChatPromptTokens,
  countTextTokens,
  MERGE_CACHE_ENTRIES,
  REPLY_PRIMING_TOKENS,
  splitIntoTokens,
  TOKENS_PER_MESSAGE,
} from './index.js';

describe('tokenizer', () => {
  it('counts o200k_base tokens of plain text', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('hello')).toBe(1);
    expect(countTextTokens('hello world')).toBe(2);
  });

  it('counts chat framing on top of the message text', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello world' },
    ];
    const text = countTextTokens('Be brief.') + countTextTokens('hello world');
    const roles = countTextTokens('system') + countTextTokens('user');
    expect(countChatPromptTokens(messages)).toBe(
      text + roles + 2 * TOKENS_PER_MESSAGE + REPLY_PRIMING_TOKENS,
    );
  });

  it('counts text parts by their text, as if the content were one string', () => {
    const text = 'a long piece of text to count';
    const parts = [{ type: 'text', text }];
    expect(countChatPromptTokens([{ role: 'user', content: parts }])).toBe(
      countChatPromptTokens([{ role: 'user', content: text }]),
    );
  });

  // The hold is an upper bound of everything a model reads at an agent's second turn.
  it('counts tool calls, tool results and every other message field', () => {
    const args = JSON.stringify({ city: 'Algiers', units: 'celsius', days: [1, 2, 3] });
    const call = {
      id: 'call_abc',
      type: 'function',
      function: { name: 'get_weather', arguments: args },
    };
    const bare = countChatPromptTokens([{ role: 'assistant', content: null }]);
    const withCall = countChatPromptTokens([
      { role: 'assistant', content: null, tool_calls: [call] },
    ]);
    expect(withCall - bare).toBeGreaterThanOrEqual(
      countTextTokens(args) + countTextTokens('get_weather'),
    );
    const result = { role: 'tool', tool_call_id: 'call_abc', content: 'sunny, 21 C' };
    expect(countChatPromptTokens([result])).toBeGreaterThanOrEqual(
      countChatPromptTokens([{ role: 'tool', content: 'sunny, 21 C' }]) +
        countTextTokens('call_abc'),
    );
  });

  it('bounds audio and file parts by their base64 length, and leaves images to the catalog', () => {
    const data = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEA'.repeat(100);
    const empty = countChatPromptTokens([{ role: 'user', content: [] }]);
    const audio = [{ type: 'input_audio', input_audio: { data, format: 'wav' } }];
    expect(countChatPromptTokens([{ role: 'user', content: audio }])).toBeGreaterThanOrEqual(
      empty + data.length,
    );
    const file = [{ type: 'file', file: { file_data: data, filename: 'a.pdf' } }];
    expect(countChatPromptTokens([{ role: 'user', content: file }])).toBeGreaterThanOrEqual(
      empty + data.length,
    );
    const image = [{ type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }];
    expect(countChatPromptTokens([{ role: 'user', content: image }])).toBe(empty);
  });

  it('splits text into pieces that join back exactly, multi-byte characters included', () => {
    const text = 'Bonjour, ça va ? 你好，世界 🙂 مرحبا';
    const pieces = splitIntoTokens(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeLessThanOrEqual(countTextTokens(text));
    expect(pieces.length).toBeGreaterThan(5);
  });
});

describe('estimateChatRequestTokens', () => {
  const messages = [{ role: 'user', content: 'Hi' }];
  const tools = Array.from({ length: 40 }, (_, i) => ({
    type: 'function',
    function: { name: `tool_${i}`, description: `Tool number ${i} of the test.` },
  }));

  it('counts the JSON text of every field the model reads on top of the messages', async () => {
    const fields = { tools, tool_choice: 'required', response_format: { type: 'json_object' } };
    const total = await estimateChatRequestTokens(messages, fields);
    const fieldTexts = Object.values(fields).map((value) => JSON.stringify(value));
    expect(total).toBeGreaterThanOrEqual(
      countChatPromptTokens(messages) + countTextTokens(fieldTexts.join('')),
    );
  });

  it('equals the messages-only count when no other field is read', async () => {
    expect(await estimateChatRequestTokens(messages, { seed: undefined })).toBe(
      countChatPromptTokens(messages),
    );
  });
});

describe("the tokenizer's merge cache", () => {
  it('keeps at most MERGE_CACHE_ENTRIES pieces, however varied the prompts', () => {
    // Distinct words that are not one token each, so that each one's merges are cached.
    const words = Array.from(
      { length: 3 * MERGE_CACHE_ENTRIES },
      (_, i) => `zq${i.toString(36)}xv`,
    );
    countTextTokens(words.join(' '));
    // gpt-tokenizer has no public reading of its cache: its own field, read here only. If the
    // library renames it, this fails and the limit must be checked again.
    const { default: api } = createRequire(import.meta.url)(
      'gpt-tokenizer/encoding/o200k_base',
    ) as {
      default: { bytePairEncodingCoreProcessor: { mergeCache?: Map<string, unknown> } };
    };
    const cache = api.bytePairEncodingCoreProcessor.mergeCache;
    expect(cache?.size).toBeGreaterThan(0);
    expect(cache?.size).toBeLessThanOrEqual(MERGE_CACHE_ENTRIES);
  });
});
