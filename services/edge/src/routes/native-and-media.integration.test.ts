import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTextTokens } from '@gateway/tokenizer';
import {
  balanceOf,
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { startFakeWorker, type FakeWorker, type Step } from '../testing/fake-worker.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/** Native inference (sync and async) and the default-models-only routes. */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let worker: FakeWorker;
let tenant: FundedAccount;

const ANSWERS: Record<string, (jobId: string, model: string) => Record<string, unknown>> = {
  native: (id, model) => ({
    id,
    model,
    results: [{ generated_text: 'Bonjour' }],
    num_input_tokens: 3,
    num_tokens: 2,
    inference_status: {
      status: 'succeeded',
      runtime_ms: 5,
      cost: 0.02,
      tokens_input: 3,
      tokens_generated: 2,
    },
  }),
  embeddings: (_id, model) => ({
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
    model,
    usage: { prompt_tokens: 1, total_tokens: 1 },
  }),
  images: (_id, model) => ({ created: 1, data: [{ url: 'https://img.example/1.png' }], model }),
  speech: () => ({
    audio_base64: Buffer.from('ID3-audio').toString('base64'),
    content_type: 'audio/mpeg',
  }),
  transcription: (_id, model) => ({ text: 'hello there', model }),
  video: (id, model) => ({ id, status: 'completed', model }),
  rerank: (id, model) => ({ id, results: [{ index: 0, relevance_score: 0.9 }], model }),
};

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing);
  worker = await startFakeWorker(edge.bus, edge.names, billing, (job): Step[] | 'silent' => {
    if (!job.replyTo) return 'silent'; // async: the real worker settles and tells the dispatcher
    return [{ type: 'final', data: ANSWERS[job.endpoint]!(job.jobId, job.model) }];
  });
  await putModel(billing, 'acme/gen', { kind: 'completion' });
  await putModel(billing, 'ext/gen', { kind: 'chat', provider: 'external' });
  for (const kind of ['embedding', 'image', 'speech', 'transcription', 'video', 'rerank']) {
    await putModel(billing, `acme/${kind}`, { kind });
  }
  await putModel(billing, 'ext/embedding', { kind: 'embedding', provider: 'external' });
  tenant = await fundAccount(billing.operator);
});

afterAll(async () => {
  await worker?.stop();
  await edge?.close();
  await billing?.close();
});

const post = (path: string, body: object) =>
  edge.api.post(path).set(bearer(tenant.apiKey)).send(body);

describe('POST /v1/inference/{model}', () => {
  it('answers synchronously with results and _service', async () => {
    const response = await post('/v1/inference/acme/gen', {
      input: 'Translate: hello',
      parameters: { max_new_tokens: 20, temperature: 0.5 },
      stop: ['\n'],
    });
    expect(response.status).toBe(200);
    const job = worker.jobs.at(-1)!;
    expect(response.body).toMatchObject({
      id: job.jobId,
      model: 'acme/gen',
      results: [{ generated_text: 'Bonjour' }],
      inference_status: { status: 'succeeded' },
      _service: { cost_dzd: 0.02, balance_dzd: expect.any(Number), hold_id: job.jobId },
    });
    expect(job.jobId).toMatch(/^inf-/);
    expect(job).toMatchObject({
      endpoint: 'native',
      modelKind: 'completion',
      promptTokens: countTextTokens('Translate: hello'),
      request: {
        input: 'Translate: hello',
        parameters: { max_new_tokens: 20, temperature: 0.5 },
        stop: ['\n'],
      },
    });
  });

  it('with a webhook: the acknowledgement at once, the hold reserved, no reply address', async () => {
    const before = await balanceOf(billing, tenant.accountId);
    const response = await post('/v1/inference/acme/gen', {
      input: 'Summarise',
      webhook: 'https://hooks.example.com/done',
    });
    expect(response.status).toBe(200);
    const after = await balanceOf(billing, tenant.accountId);
    const reserved = Math.round((after.reserved_dzd - before.reserved_dzd) * 1e6) / 1e6;
    expect(response.body).toEqual({
      id: expect.stringMatching(/^inf-/),
      model: 'acme/gen',
      inference_status: { status: 'queued' },
      _service: {
        reserved_dzd: reserved,
        status: 'pending_settlement',
        hold_id: response.body.id,
      },
    });
    expect(reserved).toBeGreaterThan(0);
    const job = worker.jobs.find((j) => j.jobId === response.body.id)!;
    expect(job.replyTo).toBeUndefined();
    expect(job).toMatchObject({
      webhookUrl: 'https://hooks.example.com/done',
      webhookFormat: 'A',
      requestId: response.headers['x-request-id'],
    });
    expect(job.request).toEqual({ input: 'Summarise' });
    expect(job.deadlineAtMs).toBeGreaterThan(Date.now() + 50_000);
  });

  it('refuses models of the external provider with 404, placing no hold', async () => {
    const before = await balanceOf(billing, tenant.accountId);
    const response = await post('/v1/inference/ext/gen', { input: 'x' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('model_not_found');
    expect(await balanceOf(billing, tenant.accountId)).toEqual(before);
  });
});

describe('default-models-only routes', () => {
  it('POST /v1/embeddings', async () => {
    const response = await post('/v1/embeddings', { model: 'acme/embedding', input: ['hi'] });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ object: 'list', data: [{ embedding: [0.1, 0.2] }] });
    expect(response.body._service.cost_dzd).toBeGreaterThan(0);
    expect(worker.jobs.at(-1)).toMatchObject({
      endpoint: 'embeddings',
      request: { input: ['hi'] },
    });
  });

  it('POST /v1/images/generations, /v1/video/generations, /v1/rerank', async () => {
    const images = await post('/v1/images/generations', {
      model: 'acme/image',
      prompt: 'a cat',
      n: 2,
    });
    expect(images.body.data).toEqual([{ url: 'https://img.example/1.png' }]);
    expect(worker.jobs.at(-1)).toMatchObject({
      endpoint: 'images',
      request: { prompt: 'a cat', n: 2 },
    });
    const video = await post('/v1/video/generations', {
      model: 'acme/video',
      prompt: 'waves',
      seconds: 4,
    });
    expect(video.body).toMatchObject({
      status: 'completed',
      _service: { cost_dzd: expect.any(Number) },
    });
    const rerank = await post('/v1/rerank', {
      model: 'acme/rerank',
      query: 'q',
      documents: ['a', 'b'],
    });
    expect(rerank.body.results).toEqual([{ index: 0, relevance_score: 0.9 }]);
    expect(worker.jobs.at(-1)).toMatchObject({ endpoint: 'rerank', modelKind: 'rerank' });
  });

  it('POST /v1/audio/speech answers with the audio bytes', async () => {
    const response = await post('/v1/audio/speech', {
      model: 'acme/speech',
      input: 'hi',
      voice: 'alloy',
    })
      .buffer(true)
      .parse((res, callback) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => callback(null, Buffer.concat(chunks)));
      });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('audio/mpeg');
    expect((response.body as Buffer).toString()).toBe('ID3-audio');
    expect(Number(response.headers['x-service-cost-dzd'])).toBeGreaterThan(0);
  });

  it('POST /v1/audio/transcriptions carries the upload base64 in the job', async () => {
    const audio = Buffer.from('RIFF....WAVEfmt ');
    const response = await edge.api
      .post('/v1/audio/transcriptions')
      .set(bearer(tenant.apiKey))
      .field('model', 'acme/transcription')
      .field('language', 'en')
      .field('response_format', 'text')
      .attach('file', audio, { filename: 'hello.wav', contentType: 'audio/wav' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.text).toBe('hello there');
    expect(worker.jobs.at(-1)!.request).toEqual({
      language: 'en',
      response_format: 'text',
      file: { base64: audio.toString('base64'), filename: 'hello.wav', contentType: 'audio/wav' },
    });
  });

  it('refuses an external-provider model or a model of another kind with 404', async () => {
    const external = await post('/v1/embeddings', { model: 'ext/embedding', input: 'x' });
    expect(external.status).toBe(404);
    expect(external.body.error.code).toBe('model_not_found');
    const wrongKind = await post('/v1/embeddings', { model: 'acme/gen', input: 'x' });
    expect(wrongKind.status).toBe(404);
    expect(wrongKind.body.error.message).toContain('not available on this endpoint');
    expect((await balanceOf(billing, tenant.accountId)).reserved_dzd).toBeGreaterThan(0); // the async hold only
  });
});
