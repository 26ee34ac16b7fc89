import { describe, expect, it } from '@jest/globals';
import {
  estimateChatRequestTokens,
  countChatPromptTokens,
  countTextTokens,
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

  it('counts non-string content by its JSON text rather than ignoring it', () => {
    const parts = [{ type: 'text', text: 'a long piece of text to count' }];
    expect(countChatPromptTokens([{ role: 'user', content: parts }])).toBeGreaterThan(
      countChatPromptTokens([{ role: 'user', content: '' }]) + 5,
    );
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
