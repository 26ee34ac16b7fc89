import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import { validateChatCompletion } from '@gateway/contracts';
import { chatPlan } from './chat-completions.js';

/*
 * The hold stays an upper bound of what a model bills, for every message shape agents
 * send, and not a wild one. Edge's estimate (plus billing's per-image ceiling, as admission adds
 * it) is compared with the prompt tokens a model node reports for the same request: the stand-in
 * node bills like a real one (chat framing, tool calls and their arguments, tool results, text
 * parts, 85 or 765 tokens per image, base64 media).
 */

let node: StandInModelNode;

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});

afterAll(async () => {
  await node?.close();
});

/** Prompt tokens the node reports for the request (max_tokens 1: only the prompt matters). */
async function billedPromptTokens(body: Record<string, unknown>): Promise<number> {
  const response = await fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, model: 'm', max_tokens: 1 }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
}

/** Edge's estimate with the model's per-image ceiling added, as billing's admission does. */
async function heldPromptTokens(body: Record<string, unknown>, imageTokens: number) {
  const plan = await chatPlan(validateChatCompletion({ model: 'm', ...body }));
  return plan.estimate.inputTokens + (plan.media?.imageCount ?? 0) * imageTokens;
}

const call = (id: string, city: string) => ({
  id,
  type: 'function',
  function: { name: 'get_weather', arguments: JSON.stringify({ city, unit: 'celsius' }) },
});
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius'] } },
      required: ['city'],
    },
  },
};
const pixel = (detail: string) => ({
  type: 'image_url',
  image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail },
});
const prose =
  'The Tassili plateau holds thousands of rock paintings, some ten thousand years old. ';

const SHAPES: [string, Record<string, unknown>, { imageTokens?: number; maxRatio: number }][] = [
  [
    'plain text turns',
    {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: prose.repeat(20) },
        { role: 'assistant', content: prose },
        { role: 'user', content: 'And the oldest?' },
      ],
    },
    { maxRatio: 1.1 },
  ],
  [
    'a two-round tool run (AI SDK shape)',
    {
      tools: [weatherTool],
      messages: [
        { role: 'developer', content: 'Use the tools.' },
        { role: 'user', content: 'Weather in Oran and Annaba?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [call('call_1', 'Oran'), call('call_2', 'Annaba')],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 24 C' },
        { role: 'tool', tool_call_id: 'call_2', content: prose.repeat(5) },
      ],
    },
    { maxRatio: 1.5 },
  ],
  [
    'LangChain shape: empty assistant content, named tool result',
    {
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Oran?' },
        { role: 'assistant', content: '', tool_calls: [call('call_9', 'Oran')] },
        { role: 'tool', tool_call_id: 'call_9', name: 'get_weather', content: 'sunny' },
      ],
    },
    { maxRatio: 1.5 },
  ],
  [
    'text parts',
    {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: prose.repeat(10) },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    },
    { maxRatio: 1.1 },
  ],
  [
    'images at a ceiling equal to the high-detail cost',
    {
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Compare.' }, pixel('high'), pixel('auto')],
        },
      ],
    },
    { imageTokens: 765, maxRatio: 1.1 },
  ],
  [
    'images at the default ceiling (1,445)',
    {
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Compare.' }, pixel('high'), pixel('low')],
        },
      ],
    },
    { imageTokens: 1_445, maxRatio: 3.5 },
  ],
  [
    'an audio part (its base64 length: a generous bound, documented)',
    {
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'input_audio',
              input_audio: { data: 'UklGRiQAAABXQVZF'.repeat(64), format: 'wav' },
            },
          ],
        },
      ],
    },
    { maxRatio: 8.5 },
  ],
];

describe('the chat hold bounds what the node bills, per message shape', () => {
  it.each(SHAPES)('%s', async (_name, body, { imageTokens = 0, maxRatio }) => {
    const billed = await billedPromptTokens(body);
    const held = await heldPromptTokens(body, imageTokens);
    expect(held).toBeGreaterThanOrEqual(billed);
    expect(held / billed).toBeLessThanOrEqual(maxRatio);
  });
});
