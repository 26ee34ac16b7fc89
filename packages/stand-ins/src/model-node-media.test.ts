import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens } from '@gateway/tokenizer';
import { postJson, type Json } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';
import { VIDEO_TOKENS_PER_SECOND } from './node-media.js';

let node: StandInModelNode;

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0 });
});
afterAll(() => node.close());

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
}

describe('stand-in model node: embeddings', () => {
  it('returns deterministic unit vectors with real token usage', async () => {
    const input = ['first text', 'second, longer text'];
    const a = await postJson(`${node.url}/v1/embeddings`, { model: 'e', input });
    const b = await postJson(`${node.url}/v1/embeddings`, { model: 'e', input: 'first text' });
    expect(a.body).toMatchObject({
      object: 'list',
      model: 'e',
      data: [{ index: 0 }, { index: 1 }],
    });
    expect(a.body.data[0].embedding).toHaveLength(8);
    expect(norm(a.body.data[0].embedding)).toBeCloseTo(1, 6);
    expect(b.body.data[0].embedding).toEqual(a.body.data[0].embedding);
    const tokens = countTextTokens(input[0]!) + countTextTokens(input[1]!);
    expect(a.body.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
  });

  it('honours dimensions and base64 encoding, and rejects empty input', async () => {
    const res = await postJson(`${node.url}/v1/embeddings`, {
      model: 'e',
      input: 'x',
      dimensions: 4,
      encoding_format: 'base64',
    });
    const bytes = Buffer.from(res.body.data[0].embedding, 'base64');
    expect(bytes.length).toBe(16);
    expect((await postJson(`${node.url}/v1/embeddings`, { model: 'e', input: [] })).status).toBe(
      400,
    );
  });
});

describe('stand-in model node: images, video, speech, transcription, rerank', () => {
  it('generates PNG images with token usage, as b64_json or a served url', async () => {
    const res = await postJson(`${node.url}/v1/images/generations`, {
      model: 'i',
      prompt: 'a blue house',
      n: 2,
    });
    expect(res.body.data).toHaveLength(2);
    const png = Buffer.from(res.body.data[0].b64_json, 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(res.body.usage).toMatchObject({
      input_tokens: countTextTokens('a blue house'),
      output_tokens: 2 * 1056,
    });
    const linked = await postJson(`${node.url}/v1/images/generations`, {
      model: 'i',
      prompt: 'a blue house',
      response_format: 'url',
    });
    const file = await fetch(linked.body.data[0].url);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(png);
  });

  it('returns a completed video job with usage', async () => {
    const res = await postJson(`${node.url}/v1/video/generations`, {
      model: 'v',
      prompt: 'waves',
      seconds: '8',
    });
    expect(res.body).toMatchObject({
      object: 'video',
      status: 'completed',
      model: 'v',
      seconds: 8,
      usage: { output_tokens: 8 * VIDEO_TOKENS_PER_SECOND, input_tokens: countTextTokens('waves') },
    });
    expect((await fetch(res.body.url)).status).toBe(200);
  });

  it('synthesises speech bytes in the asked format', async () => {
    const speech = (format?: string) =>
      fetch(`${node.url}/v1/audio/speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 's',
          input: 'hello there',
          voice: 'alloy',
          response_format: format,
        }),
      });
    const mp3 = await speech();
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    const wav = Buffer.from(await (await speech('wav')).arrayBuffer());
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    const again = Buffer.from(await (await speech('wav')).arrayBuffer());
    expect(again).toEqual(wav);
    expect((await speech('ogg')).status).toBe(400);
  });

  it('transcribes a multipart upload with token usage', async () => {
    const form = () => {
      const data = new FormData();
      data.append('model', 't');
      data.append('file', new Blob([Buffer.alloc(5_000, 7)], { type: 'audio/wav' }), 'a.wav');
      return data;
    };
    const post = async (): Promise<Json> =>
      (await fetch(`${node.url}/v1/audio/transcriptions`, { method: 'POST', body: form() })).json();
    const first = await post();
    expect(first.text.length).toBeGreaterThan(0);
    expect((await post()).text).toBe(first.text);
    expect(first.usage).toMatchObject({
      type: 'tokens',
      input_tokens: 5,
      output_tokens: countTextTokens(first.text),
      total_tokens: 5 + countTextTokens(first.text),
    });
    const noFile = new FormData();
    noFile.append('model', 't');
    const refused = await fetch(`${node.url}/v1/audio/transcriptions`, {
      method: 'POST',
      body: noFile,
    });
    expect(refused.status).toBe(400);
  });

  it('reranks by word overlap, Cohere-style', async () => {
    const res = await postJson(`${node.url}/v1/rerank`, {
      model: 'r',
      query: 'blue river stone',
      documents: ['a red house', 'the blue river', 'blue stone river bank'],
      top_n: 2,
      return_documents: true,
    });
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([2, 1]);
    expect(res.body.results[0].document).toEqual({ text: 'blue stone river bank' });
    expect(res.body.results[0].relevance_score).toBeGreaterThan(
      res.body.results[1].relevance_score,
    );
    expect(res.body.meta.billed_units).toEqual({ search_units: 1 });
    expect(res.body.usage.total_tokens).toBeGreaterThan(0);
  });
});
