import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens, splitIntoTokens } from '@gateway/tokenizer';
import { standInAnswer } from './answer.js';
import { postJson, postStream, type Json } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';

let node: StandInModelNode;
const inputs = 'Write about the sea.';
const full = standInAnswer(inputs);

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});
afterAll(() => node.close());

describe('stand-in model node: TGI /generate', () => {
  it('returns generated_text only, unless details are asked for', async () => {
    const plain = await postJson(`${node.url}/generate`, { inputs });
    expect(plain.body).toEqual({ generated_text: full });
    expect(plain.headers.get('x-prompt-tokens')).toBe(String(countTextTokens(inputs)));
    expect(plain.headers.get('x-generated-tokens')).toBe(String(countTextTokens(full)));
    const detailed = await postJson(`${node.url}/generate`, {
      inputs,
      parameters: { details: true },
    });
    expect(detailed.body.details).toMatchObject({
      finish_reason: 'eos_token',
      generated_tokens: countTextTokens(full),
      prefill: [],
    });
    expect(detailed.body.details.tokens.map((t: { text: string }) => t.text)).toEqual(
      splitIntoTokens(full),
    );
  });

  it('caps at max_new_tokens, keeps stop sequences, and returns prefill on request', async () => {
    const capped = await postJson(`${node.url}/generate`, {
      inputs,
      parameters: { max_new_tokens: 4, decoder_input_details: true },
    });
    expect(capped.body.generated_text).toBe(splitIntoTokens(full).slice(0, 4).join(''));
    expect(capped.body.details).toMatchObject({ finish_reason: 'length', generated_tokens: 4 });
    expect(capped.body.details.prefill.map((t: { text: string }) => t.text).join('')).toBe(inputs);
    expect(capped.body.details.prefill[0].logprob).toBeNull();
    const stop = full.slice(8, 12);
    const stopped = await postJson(`${node.url}/generate`, {
      inputs,
      parameters: { stop: [stop], details: true },
    });
    expect(stopped.body.generated_text).toBe(full.slice(0, full.indexOf(stop) + stop.length));
    expect(stopped.body.details.finish_reason).toBe('stop_sequence');
  });

  it('returns the full text when return_full_text is set', async () => {
    const res = await postJson(`${node.url}/generate`, {
      inputs,
      parameters: { return_full_text: true },
    });
    expect(res.body.generated_text).toBe(inputs + full);
  });

  it('answers validation errors with 422 and a TGI error body', async () => {
    const cases = [
      { inputs: '' },
      { inputs, parameters: { max_new_tokens: 0 } },
      { inputs, parameters: { temperature: 0 } },
      { inputs, parameters: { stop: ['a', 'b', 'c', 'd', 'e'] } },
      { inputs, parameters: { max_new_tokens: 40_000 } },
    ];
    for (const body of cases) {
      const res = await postJson(`${node.url}/generate`, body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: expect.any(String), error_type: 'validation' });
    }
  });
});

describe('stand-in model node: TGI /generate_stream', () => {
  it('streams one event per token, the last with generated_text and details', async () => {
    const { events } = await postStream(`${node.url}/generate_stream`, {
      inputs,
      parameters: { details: true },
    });
    const tokens = events as Json[];
    expect(tokens.map((e) => e.token.text).join('')).toBe(full);
    expect(tokens.slice(0, -1).every((e) => e.generated_text === null && e.details === null)).toBe(
      true,
    );
    expect(tokens.at(-1)).toMatchObject({
      generated_text: full,
      details: {
        finish_reason: 'eos_token',
        generated_tokens: countTextTokens(full),
        input_length: countTextTokens(inputs),
      },
    });
    expect(tokens[0].token).toEqual({
      id: expect.any(Number),
      text: expect.any(String),
      logprob: expect.any(Number),
      special: false,
    });
  });

  it('sends no details unless asked, and refuses decoder_input_details', async () => {
    const { events } = await postStream(`${node.url}/generate_stream`, {
      inputs,
      parameters: { max_new_tokens: 3 },
    });
    expect(events).toHaveLength(3);
    expect((events.at(-1) as Json).details).toBeNull();
    const refused = await postJson(`${node.url}/generate_stream`, {
      inputs,
      parameters: { decoder_input_details: true },
    });
    expect(refused.status).toBe(422);
  });

  it('describes itself on /info and reports health', async () => {
    const info = await (await fetch(`${node.url}/info`)).json();
    expect(info).toMatchObject({ max_total_tokens: 32_768, version: '0.0.0-stand-in' });
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });
});

describe('stand-in model node: TEI /embed', () => {
  it('returns a bare list of unit vectors, the same as /v1/embeddings', async () => {
    const res = await postJson(`${node.url}/embed`, { inputs: ['alpha', 'beta gamma'] });
    expect(res.body).toHaveLength(2);
    const openAi = await postJson(`${node.url}/v1/embeddings`, { model: 'e', input: 'alpha' });
    expect(res.body[0]).toEqual(openAi.body.data[0].embedding);
    expect(res.headers.get('x-prompt-tokens')).toBe(
      String(countTextTokens('alpha') + countTextTokens('beta gamma')),
    );
    const refused = await postJson(`${node.url}/embed`, { inputs: [] });
    expect([refused.status, refused.body.error_type]).toEqual([422, 'validation']);
  });
});
