import { describe, expect, it } from '@jest/globals';
import { countTextTokens } from '@gateway/tokenizer';
import { microDzdToDzd } from '@gateway/contracts';
import { expectedCost, useWorkerFixture } from '../testing/worker-fixture.suite.js';

const node = (url: string, kind: string, protocol = 'openai', maxOutputTokens = 64) => ({
  kind,
  provider: 'node',
  protocol,
  upstream_model: 'stand-in-model',
  max_output_tokens: maxOutputTokens,
  nodes: [{ url }],
});

describe('worker: native inference and the other routes', () => {
  const f = useWorkerFixture();

  async function run(
    model: string,
    endpoint: 'native' | 'embeddings' | 'images' | 'speech' | 'transcription' | 'video' | 'rerank',
    modelKind:
      'completion' | 'embedding' | 'image' | 'speech' | 'transcription' | 'video' | 'rerank',
    request: Record<string, unknown>,
    options: { async?: boolean; webhookFormat?: 'A' | 'B'; requestId?: string } = {},
  ) {
    const holdId = await f.hold(model);
    const jobId = await f.client.publish(
      {
        accountId: f.account.accountId,
        holdId,
        model,
        modelKind,
        endpoint,
        request,
        ...(options.requestId ? { requestId: options.requestId } : {}),
        ...(options.async
          ? {
              webhookUrl: 'https://hooks.example.com/in',
              webhookFormat: options.webhookFormat ?? 'A',
            }
          : {}),
      },
      { async: options.async },
    );
    return { holdId, jobId };
  }

  it.each(['tgi', 'openai'])(
    'answers a synchronous native job on a %s node in the decisions §3 shape',
    async (protocol) => {
      await f.putModel(`acme/base-${protocol}`, node(f.node.url, 'completion', protocol));
      const { holdId, jobId } = await run(`acme/base-${protocol}`, 'native', 'completion', {
        input: 'Once upon a time',
        parameters: { max_new_tokens: 12, temperature: 0.7 },
      });
      const { end } = await f.client.waitForEnd(jobId);
      expect(end.type).toBe('final');
      const data = end.data as Record<string, unknown> & { results: { generated_text: string }[] };
      expect(data).toMatchObject({ id: jobId, model: `acme/base-${protocol}` });
      expect(data.results).toHaveLength(1);
      expect(data.num_tokens).toBe(12);
      expect(data.num_input_tokens).toBe(countTextTokens('Once upon a time'));
      const cost = expectedCost(end.usage!);
      expect(data.inference_status).toEqual({
        status: 'succeeded',
        runtime_ms: expect.any(Number),
        cost: microDzdToDzd(cost),
        tokens_input: end.usage!.promptTokens,
        tokens_generated: 12,
      });
      expect(await f.billing.hold(holdId)).toMatchObject({ status: 'settled', settled: cost });
    },
  );

  it('sends a TGI node only the schema parameters, whatever the job carries', async () => {
    await f.putModel('acme/base-tgi', node(f.node.url, 'completion', 'tgi'));
    const { jobId } = await run('acme/base-tgi', 'native', 'completion', {
      input: 'Once upon a time',
      parameters: { max_new_tokens: 4, top_k: 5, seed: 2, best_of: 4, details: false },
    });
    expect((await f.client.waitForEnd(jobId)).end.type).toBe('final');
    const sent = f.node.requests().at(-1)!.body as { parameters: Record<string, unknown> };
    expect(sent.parameters).toEqual({
      max_new_tokens: 4,
      top_k: 5,
      seed: 2,
      details: true,
      decoder_input_details: true,
    });
  });

  it('publishes a completion event for an async native job, with the settled cost', async () => {
    await f.putModel('acme/base-tgi', node(f.node.url, 'completion', 'tgi'));
    const { holdId, jobId } = await run(
      'acme/base-tgi',
      'native',
      'completion',
      { input: 'Hello' },
      { async: true, webhookFormat: 'B', requestId: 'req_async-native-1' },
    );
    const event = await f.client.waitForCompletion(jobId);
    const hold = await f.billing.hold(holdId);
    expect(event).toMatchObject({
      jobId,
      // The request id travels on to the dispatcher, and reached billing with the settlement.
      requestId: 'req_async-native-1',
      accountId: f.account.accountId,
      status: 'succeeded',
      webhookUrl: 'https://hooks.example.com/in',
      webhookFormat: 'B',
      costMicroDzd: hold.settled!.toString(),
    });
    expect(event.results![0]!.generated_text.length).toBeGreaterThan(0);
    expect(event).not.toHaveProperty('error');
    expect(f.client.repliesOf(jobId)).toEqual([]);
    expect(f.billing.received).toContainEqual({
      method: 'POST',
      path: '/internal/v1/holds/settlements',
      requestId: 'req_async-native-1',
    });
  });

  it('publishes a failure event and voids the hold when the async job fails', async () => {
    await f.putModel('acme/base-broken', node('http://127.0.0.1:9', 'completion', 'tgi'));
    const { holdId, jobId } = await run(
      'acme/base-broken',
      'native',
      'completion',
      { input: 'Hello' },
      { async: true },
    );
    const event = await f.client.waitForCompletion(jobId);
    expect(event).toMatchObject({
      status: 'failed',
      costMicroDzd: null,
      usage: { promptTokens: 0, completionTokens: 0 },
      error: { type: 'inference_failed', message: 'Inference failed.' },
    });
    expect(event).not.toHaveProperty('results');
    expect((await f.billing.hold(holdId)).status).toBe('voided');
  });

  it('returns embeddings for a native job on an embedding model', async () => {
    await f.putModel('acme/embed', node(f.node.url, 'embedding'));
    const { jobId, holdId } = await run('acme/embed', 'native', 'embedding', {
      inputs: ['alpha', 'beta gamma'],
    });
    const { end } = await f.client.waitForEnd(jobId);
    const data = end.data as { embeddings: number[][] };
    expect(data.embeddings).toHaveLength(2);
    expect(end.usage).toMatchObject({
      promptTokens: countTextTokens('alpha') + countTextTokens('beta gamma'),
      completionTokens: 0,
    });
    expect((await f.billing.hold(holdId)).status).toBe('settled');
  });

  it.each([
    [
      'embeddings',
      'embedding',
      { input: ['one', 'two'] },
      (d: Record<string, unknown>) => expect(d).toMatchObject({ object: 'list' }),
    ],
    [
      'images',
      'image',
      { prompt: 'a camel at dawn', size: '256x256' },
      (d: Record<string, unknown>) => expect(Array.isArray(d.data)).toBe(true),
    ],
    [
      'video',
      'video',
      { prompt: 'dunes moving', seconds: 2 },
      (d: Record<string, unknown>) => expect(d).toHaveProperty('id'),
    ],
    [
      'rerank',
      'rerank',
      { query: 'desert', documents: ['the desert is dry', 'the sea is wet'] },
      (d: Record<string, unknown>) => expect(Array.isArray(d.results)).toBe(true),
    ],
    [
      'speech',
      'speech',
      { input: 'Marhaba', voice: 'alloy' },
      (d: Record<string, unknown>) => expect(String(d.audio_base64).length).toBeGreaterThan(10),
    ],
  ] as const)(
    'forwards %s to the node and settles its usage',
    async (endpoint, kind, request, check) => {
      // The catalog's output cap sizes the hold: for video it must cover the clip's tokens.
      await f.putModel(`acme/${kind}`, node(f.node.url, kind, 'openai', 100_000));
      const { jobId, holdId } = await run(`acme/${kind}`, endpoint, kind, request);
      const { end } = await f.client.waitForEnd(jobId);
      expect(end.error).toBeUndefined();
      expect(end.data).not.toHaveProperty('_service');
      check(end.data as Record<string, unknown>);
      expect(end.usage!.promptTokens + end.usage!.completionTokens).toBeGreaterThan(0);
      expect(await f.billing.hold(holdId)).toMatchObject({
        status: 'settled',
        settled: expectedCost(end.usage!),
      });
      const sent = f.node.requests().at(-1)!;
      expect((sent.body as { model?: string }).model).toBe('stand-in-model');
    },
  );

  it('uploads a transcription file as multipart and returns the text', async () => {
    await f.putModel('acme/transcribe', node(f.node.url, 'transcription'));
    const audio = Buffer.from('RIFF....WAVEfmt fake audio bytes for the stand-in');
    const { jobId } = await run('acme/transcribe', 'transcription', 'transcription', {
      file: { base64: audio.toString('base64'), filename: 'clip.wav', contentType: 'audio/wav' },
      language: 'ar',
    });
    const { end } = await f.client.waitForEnd(jobId);
    expect(end.error).toBeUndefined();
    expect(typeof (end.data as { text?: unknown }).text).toBe('string');
  });
});
