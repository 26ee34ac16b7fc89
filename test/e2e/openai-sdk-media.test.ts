import { describe, expect, it } from '@jest/globals';
import { toFile } from 'openai';
import { countTextTokens } from '@gateway/tokenizer';
import { balanceOf } from '../../services/billing/src/testing/billing-under-test.suite.js';
import { MEDIA_MODELS, useRealStack } from '../../services/edge/src/testing/real-stack.suite.js';

/**
 * The media routes with the official `openai` SDK, through the real worker to a stand-in model
 * node: what a client that only changed its base URL gets for embeddings, images, speech and
 * transcription, and that each is settled. Video and rerank have no SDK method: plain HTTP.
 */

const stack = useRealStack(MEDIA_MODELS);

/** Everything reserved for a request is released once it is answered. */
async function expectNothingReserved() {
  expect((await balanceOf(stack.billing, stack.tenant.accountId)).reserved_dzd).toBe(0);
}

describe('openai SDK: media routes', () => {
  it('creates embeddings (the SDK asks for base64 and decodes it)', async () => {
    const input = ['the desert at dawn', 'a caravan'];
    const result = await stack.client(stack.tenant.apiKey).embeddings.create({
      model: 'acme/embed',
      input,
    });
    expect(result.data).toHaveLength(2);
    const [first] = result.data;
    expect(first!.embedding.length).toBeGreaterThan(0);
    expect(first!.embedding.every((value) => Number.isFinite(value))).toBe(true);
    const upstream = stack.node.requests().filter((r) => r.path === '/v1/embeddings');
    expect(upstream.at(-1)?.body).toMatchObject({ encoding_format: 'base64' });
    // Billed on the tokens the gateway counted, which the usage reports.
    expect(result.usage.prompt_tokens).toBe(
      input.reduce((sum, text) => sum + countTextTokens(text), 0),
    );
    await expectNothingReserved();
  });

  it('generates images as base64 PNG', async () => {
    const result = await stack.client(stack.tenant.apiKey).images.generate({
      model: 'acme/paint',
      prompt: 'a camel under the stars',
      size: '256x256',
      response_format: 'b64_json',
    });
    const png = Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    await expectNothingReserved();
  });

  it('speaks: audio bytes back, the cost in headers', async () => {
    const response = await stack.client(stack.tenant.apiKey).audio.speech.create({
      model: 'acme/voice',
      input: 'Marhaba, welcome to the gateway.',
      voice: 'alloy',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^audio\//);
    expect(Number(response.headers.get('x-service-cost-dzd'))).toBeGreaterThan(0);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
    await expectNothingReserved();
  });

  it('transcribes an uploaded file (multipart)', async () => {
    const audio = await stack.client(stack.tenant.apiKey).audio.speech.create({
      model: 'acme/voice',
      input: 'A short sentence to transcribe.',
      voice: 'alloy',
    });
    const file = await toFile(Buffer.from(await audio.arrayBuffer()), 'speech.mp3', {
      type: 'audio/mpeg',
    });
    const transcription = await stack.client(stack.tenant.apiKey).audio.transcriptions.create({
      model: 'acme/ear',
      file,
    });
    expect(transcription.text.length).toBeGreaterThan(0);
    await expectNothingReserved();
  });

  it('serves video and rerank over plain HTTP', async () => {
    const post = (route: string, body: unknown) =>
      fetch(`${stack.baseUrl}/v1/${route}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${stack.tenant.apiKey}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify(body),
      });
    const video = await post('video/generations', {
      model: 'acme/film',
      prompt: 'dunes moving in the wind',
      seconds: 2,
    });
    expect(video.status).toBe(200);
    expect(await video.json()).toMatchObject({ _service: { cost_dzd: expect.any(Number) } });

    const documents = ['camels drink rarely', 'the oasis has water', 'sand is hot'];
    const rerank = await post('rerank', {
      model: 'acme/rank',
      query: 'where is water',
      documents,
      top_n: 2,
    });
    expect(rerank.status).toBe(200);
    const ranked = (await rerank.json()) as { results: { index: number }[] };
    expect(ranked.results).toHaveLength(2);
    for (const { index } of ranked.results) expect(index).toBeLessThan(documents.length);
    await expectNothingReserved();
  });
});
