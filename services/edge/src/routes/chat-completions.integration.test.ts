import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countChatPromptTokens } from '@gateway/tokenizer';
import { listen, type RunningServer } from '@gateway/runtime';
import {
  balanceOf,
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import {
  chatChunk,
  chatCompletion,
  startFakeWorker,
  type FakeWorker,
  type Step,
} from '../testing/fake-worker.suite.js';
import { readEvents } from '../testing/sse.suite.js';
import { waitFor } from '../testing/wait.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/** Chat completions, JSON and SSE, against a scripted worker on the real broker and billing. */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let worker: FakeWorker;
let server: RunningServer;
let tenant: FundedAccount;
const scripts = new Map<string, (jobId: string) => Step[]>();

const messages = [{ role: 'user', content: 'Say hello' }];
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
const postStream = (body: object, signal?: AbortSignal) =>
  fetch(url('/v1/chat/completions'), {
    method: 'POST',
    headers: { ...bearer(tenant.apiKey), 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'acme/chat', messages, stream: true, ...body }),
    ...(signal ? { signal } : {}),
  });

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { replyTimeoutMs: 3_000 });
  worker = await startFakeWorker(edge.bus, edge.names, billing, (job) => {
    const user = String((job.request.messages as { content: string }[])[0]?.content);
    const scripted = scripts.get(user);
    if (scripted) return scripted(job.jobId);
    if (job.stream) {
      return [
        { type: 'chunk', data: chatChunk(job, 'Hel') },
        { type: 'chunk', data: chatChunk(job, 'lo') },
        { type: 'final', data: chatChunk(job, null, true) },
      ];
    }
    return [{ type: 'final', data: chatCompletion(job) }];
  });
  server = await listen(edge.app, '127.0.0.1', 0);
  // 1000 DZD per million input tokens, 2000 per million output tokens.
  await putModel(billing, 'acme/chat', { inputPrice: 1_000, outputPrice: 2_000 });
  await putModel(billing, 'ext/chat', { provider: 'external' });
});

afterAll(async () => {
  await server?.close(1_000);
  await worker?.stop();
  await edge?.close();
  await billing?.close();
});

describe('JSON', () => {
  beforeAll(async () => {
    tenant = await fundAccount(billing.operator);
  });

  it('answers the completion with _service: cost and balance from settlement', async () => {
    const response = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/chat', messages, webhook: 'https://example.com/ignored' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      object: 'chat.completion',
      model: 'acme/chat',
      choices: [{ message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
    });
    // 10 input and 5 output tokens: (10 × 1000 + 5 × 2000) / 10^6 DZD.
    // The hold id (= the job id) is the receipt's key.
    expect(response.body._service).toEqual({
      cost_dzd: 0.02,
      balance_dzd: 9.98,
      hold_id: worker.jobs.at(-1)!.jobId,
    });
    expect(response.headers['x-ratelimit-limit']).toBe('100');

    const job = worker.jobs.at(-1)!;
    expect(job).toMatchObject({
      endpoint: 'chat.completions',
      model: 'acme/chat',
      modelKind: 'chat',
      accountId: tenant.accountId,
      serviceTier: 'default',
      stream: false,
      replyTo: edge.replies.queue,
      promptTokens: countChatPromptTokens(messages),
      // The worker logs and forwards the id the client was answered with.
      requestId: response.headers['x-request-id'],
    });
    expect(job.jobId).toMatch(/^chatcmpl-/);
    expect(job.request).toEqual({ model: 'acme/chat', messages });
    expect(worker.queues.get(job.jobId)).toBe(edge.names.queues.inferenceJobs);
    expect(await balanceOf(billing, tenant.accountId)).toMatchObject({ reserved_dzd: 0 });
  });

  it('lists warnings, sorted, only when something was dropped', async () => {
    scripts.set('warn me', (jobId) => [
      {
        type: 'final',
        data: { id: jobId, object: 'chat.completion', choices: [] },
        warnings: [
          "Parameter 'top_p' is not supported by this model and was ignored.",
          "Parameter 'stop' is not supported by this model and was ignored.",
        ],
      },
    ]);
    const response = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'ext/chat', messages: [{ role: 'user', content: 'warn me' }] });
    expect(response.body._service.warnings).toEqual([
      "Parameter 'stop' is not supported by this model and was ignored.",
      "Parameter 'top_p' is not supported by this model and was ignored.",
    ]);
  });

  it('refuses parameters default models do not accept (400 naming the first), placing no hold', async () => {
    const jobsBefore = worker.jobs.length;
    const response = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/chat', messages, use_beam_search: true, best_of: 4, seed: 1 });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual({
      message: 'Unrecognized request argument supplied: best_of',
      type: 'service_error',
      code: 'invalid_request_body',
      param: 'best_of',
    });
    expect(worker.jobs.length).toBe(jobsBefore);
    expect(await balanceOf(billing, tenant.accountId)).toMatchObject({ reserved_dzd: 0 });
    // Parameters of the reference API that cost nothing extra are accepted.
    const accepted = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/chat', messages, seed: 1, top_logprobs: 2, logprobs: true, user: 'u' });
    expect(accepted.status).toBe(200);
    // The reference API's cost-free parameters (the worker does not forward them).
    const costFree = {
      store: true,
      metadata: { team: 'a' },
      prompt_cache_key: 'k',
      safety_identifier: 's',
      verbosity: 'low',
    };
    const alsoAccepted = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/chat', messages, ...costFree });
    expect(alsoAccepted.status).toBe(200);
  });

  it('passes unknown parameters on to external-provider models (dropped there with a warning)', async () => {
    const response = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'ext/chat', messages, best_of: 4 });
    expect(response.status).toBe(200);
    expect(worker.jobs.at(-1)!.request).toMatchObject({ model: 'ext/chat', best_of: 4 });
  });

  it('routes service_tier priority to the priority queue at +20%', async () => {
    const response = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/chat', messages, service_tier: 'priority' });
    expect(response.body._service.cost_dzd).toBe(0.024);
    const job = worker.jobs.at(-1)!;
    expect(job.serviceTier).toBe('priority');
    expect(job.request.service_tier).toBe('priority');
    expect(worker.queues.get(job.jobId)).toBe(edge.names.queues.inferenceJobsPriority);
  });

  it("returns the worker's error with its status", async () => {
    scripts.set('busy', () => [
      { type: 'error', code: 'rate_limit_exceeded', message: 'Model at capacity' },
    ]);
    const response = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .send({ model: 'acme/chat', messages: [{ role: 'user', content: 'busy' }] });
    expect(response.status).toBe(429);
    expect(response.body.error).toEqual({
      message: 'Model at capacity',
      type: 'service_error',
      code: 'rate_limit_exceeded',
    });
  });
});

describe('SSE', () => {
  beforeAll(async () => {
    tenant = await fundAccount(billing.operator);
  });

  it('streams data-only chunks, the usage chunk with its cost and [DONE], without _service', async () => {
    const response = await postStream({});
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-ratelimit-remaining')).toBeDefined();
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const events = await readEvents(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? null)).toEqual(['Hel', 'lo', null]);
    // The final usage carries the settled cost, as peers extend the usage object.
    expect(chunks.at(-1)).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { total_tokens: 15, cost_dzd: 0.02 },
    });
    expect(chunks.at(-1).usage).not.toHaveProperty('settlement');
    expect(events.join('')).not.toContain('_service');
    expect(worker.jobs.at(-1)!.stream).toBe(true);
  });

  it('an error before the first byte is a normal JSON error with its status', async () => {
    scripts.set('gone', () => [{ type: 'error', code: 'model_not_found', message: 'Model left' }]);
    const response = await postStream({ messages: [{ role: 'user', content: 'gone' }] });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'model_not_found',
    );
  });

  it('an error after the stream started is one error event, then [DONE]', async () => {
    scripts.set('break', (jobId) => [
      { type: 'chunk', data: { id: jobId, object: 'chat.completion.chunk', choices: [] } },
      { type: 'error', code: 'GATEWAY_TIMEOUT', message: 'Node timed out' },
    ]);
    const response = await postStream({ messages: [{ role: 'user', content: 'break' }] });
    expect(response.status).toBe(200);
    const events = await readEvents(response);
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[1]!)).toEqual({
      error: { message: 'Node timed out', type: 'service_error', code: 'GATEWAY_TIMEOUT' },
    });
    expect(events[2]).toBe('[DONE]');
  });

  it('a client that disconnects cancels the job', async () => {
    scripts.set('long', (jobId) => [
      { type: 'chunk', data: { id: jobId, object: 'chat.completion.chunk', choices: [] } },
      { wait: 2_000 },
      { type: 'final', data: { id: jobId, choices: [] } },
    ]);
    const controller = new AbortController();
    const response = await postStream(
      { messages: [{ role: 'user', content: 'long' }] },
      controller.signal,
    );
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const job = worker.jobs.at(-1)!;
    await waitFor(() => worker.cancels.some((c) => c.jobId === job.jobId));
    expect(worker.cancels.find((c) => c.jobId === job.jobId)?.reason).toBe('client_disconnected');
  });

  it('a client that disconnects from a JSON request cancels it too', async () => {
    scripts.set('slow json', () => [{ wait: 2_000 }, { type: 'error', code: 'GATEWAY_TIMEOUT' }]);
    const controller = new AbortController();
    const pending = fetch(url('/v1/chat/completions'), {
      method: 'POST',
      headers: { ...bearer(tenant.apiKey), 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'acme/chat',
        messages: [{ role: 'user', content: 'slow json' }],
      }),
      signal: controller.signal,
    }).catch(() => null);
    await waitFor(() =>
      worker.jobs.some(
        (j) => j.request.messages && JSON.stringify(j.request).includes('slow json'),
      ),
    );
    controller.abort();
    await pending;
    const job = worker.jobs.at(-1)!;
    await waitFor(() => worker.cancels.some((c) => c.jobId === job.jobId));
  });
});
