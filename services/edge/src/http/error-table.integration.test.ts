import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import {
  balanceOf,
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { chatCompletion, startFakeWorker, type FakeWorker } from '../testing/fake-worker.suite.js';
import { waitFor } from '../testing/wait.suite.js';
import { clientToken, nowS } from '../testing/tokens.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/** The spec's error table, row by row, through HTTP: status, code, body shape and headers. */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let worker: FakeWorker;

const chat = (model = 'acme/chat') => ({ model, messages: [{ role: 'user', content: 'Hi' }] });

function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(response.body)).toEqual(['error']);
  const { message, type, code: actual, param, ...rest } = response.body.error;
  expect({ type, code: actual }).toEqual({ type: 'service_error', code });
  expect(typeof message).toBe('string');
  expect(param === undefined || typeof param === 'string').toBe(true);
  expect(rest).toEqual({});
  expect(response.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]+$/);
}

function expectRateLimitHeaders(response: Response, limit = 100) {
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(Number(response.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
  const resetMs = Number(response.headers['x-ratelimit-reset']);
  expect(resetMs).toBeGreaterThan(Date.now() - 1_000);
  expect(resetMs).toBeLessThanOrEqual(Date.now() + 61_000);
}

const post = (credential: string | null, body: unknown, path = '/v1/chat/completions') => {
  const req = edge.api.post(path);
  if (credential !== null) req.set(bearer(credential));
  return req.send(body as object);
};

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { replyTimeoutMs: 400, jsonBodyBytes: 64 * 1024 });
  worker = await startFakeWorker(edge.bus, edge.names, billing, (job) =>
    job.model === 'acme/slow' ? 'silent' : [{ type: 'final', data: chatCompletion(job) }],
  );
  await putModel(billing, 'acme/chat');
  await putModel(billing, 'acme/slow');
  await putModel(billing, 'acme/other');
});

afterAll(async () => {
  await worker?.stop();
  await edge?.close();
  await billing?.close();
});

describe('spec error table', () => {
  let tenant: FundedAccount;
  beforeAll(async () => {
    tenant = await fundAccount(billing.operator);
  });

  it('400 missing_model: model absent or not a string', async () => {
    const absent = await post(tenant.apiKey, { messages: [{ role: 'user', content: 'x' }] });
    expectError(absent, 400, 'missing_model');
    expect(absent.body.error.param).toBe('model');
    expectRateLimitHeaders(absent);
    expectError(await post(tenant.apiKey, { ...chat(), model: 42 }), 400, 'missing_model');
  });

  it('400 invalid_request_body: malformed JSON, bad type, out-of-range value', async () => {
    const malformed = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .set('Content-Type', 'application/json')
      .send('{"model": "acme/chat",');
    expectError(malformed, 400, 'invalid_request_body');
    expectRateLimitHeaders(malformed);
    const range = await post(tenant.apiKey, { ...chat(), temperature: 2.5 });
    expectError(range, 400, 'invalid_request_body');
    expect(range.body.error.param).toBe('temperature');
  });

  it('401 invalid_api_key: header missing, not Bearer, unknown or deleted key', async () => {
    expectError(await post(null, chat()), 401, 'invalid_api_key');
    const basic = await edge.api
      .post('/v1/chat/completions')
      .set('Authorization', `Basic ${tenant.apiKey}`)
      .send(chat());
    expectError(basic, 401, 'invalid_api_key');
    const unknown = await post(`sk_live_${'A'.repeat(43)}`, chat());
    expectError(unknown, 401, 'invalid_api_key');
    expect(unknown.headers['x-ratelimit-limit']).toBeUndefined();

    const other = await fundAccount(billing.operator);
    await edge.api
      .delete(`/admin/v1/accounts/${other.accountId}/api-keys/auto`)
      .set(bearer(edge.adminToken))
      .expect(204);
    expectError(await post(other.apiKey, chat()), 401, 'invalid_api_key');
  });

  it('401 before validation: a bad credential with a malformed or oversized body', async () => {
    const malformed = await edge.api
      .post('/v1/chat/completions')
      .set('Content-Type', 'application/json')
      .send('{nope');
    expectError(malformed, 401, 'invalid_api_key');
    const huge = await post(null, { ...chat(), pad: 'x'.repeat(100 * 1024) });
    expectError(huge, 401, 'invalid_api_key');
  });

  it('401 token_expired: the message states the expiry time', async () => {
    const exp = nowS() - 60;
    const expired = await post(clientToken(tenant, { exp }), chat());
    expectError(expired, 401, 'token_expired');
    expect(expired.body.error.message).toContain(new Date(exp * 1000).toISOString().slice(0, 19));
  });

  it('401 token_revoked: a token revoked by its owner', async () => {
    const created = await post(tenant.apiKey, { api_key_name: 'auto' }, '/v1/scoped-jwt');
    expect(created.status).toBe(200);
    const token = created.body.token as string;
    expect((await post(token, chat())).status).toBe(200);
    await edge.api
      .delete('/v1/scoped-jwt')
      .query({ jwt: token })
      .set(bearer(tenant.apiKey))
      .expect(200);
    expectError(await post(token, chat()), 401, 'token_revoked');
  });

  it('402 insufficient_balance: nothing to hold the worst case with', async () => {
    const broke = await fundAccount(billing.operator, { creditDzd: 0 });
    const refused = await post(broke.apiKey, chat());
    expectError(refused, 402, 'insufficient_balance');
    expectRateLimitHeaders(refused);
    expect(refused.headers['retry-after']).toBeUndefined();
  });

  it('402 budget_exhausted: the scoped token spending limit is reached', async () => {
    const token = clientToken(tenant, { exp: nowS() + 3600, spending_limit: 0.000001 });
    const refused = await post(token, chat());
    expectError(refused, 402, 'budget_exhausted');
    expectRateLimitHeaders(refused);
  });

  it('403 account_suspended on every request', async () => {
    const suspended = await fundAccount(billing.operator);
    await edge.api
      .post(`/admin/v1/accounts/${suspended.accountId}/suspend`)
      .set(bearer(edge.adminToken))
      .expect(200);
    expectError(await post(suspended.apiKey, chat()), 403, 'account_suspended');
    const balance = await edge.api.get('/v1/user/balance').set(bearer(suspended.apiKey));
    expectError(balance, 403, 'account_suspended');
  });

  it("403 model_not_allowed: the message lists the token's models", async () => {
    const token = clientToken(tenant, { exp: nowS() + 3600, models: ['acme/other'] });
    const refused = await post(token, chat());
    expectError(refused, 403, 'model_not_allowed');
    expect(refused.body.error.message).toContain('acme/other');
    expectRateLimitHeaders(refused);
  });

  it('404 model_not_found: not in the catalog', async () => {
    const refused = await post(tenant.apiKey, chat('acme/missing'));
    expectError(refused, 404, 'model_not_found');
    expect(refused.body.error.param).toBe('model');
    expectRateLimitHeaders(refused);
  });

  it('429 rate_limit_exceeded with Retry-After and X-RateLimit-* (ms reset)', async () => {
    const limited = await fundAccount(billing.operator, { rateLimitPerMinute: 2 });
    const first = await post(limited.apiKey, chat());
    expect(first.status).toBe(200);
    expectRateLimitHeaders(first, 2);
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    await edge.api.get('/v1/user/balance').set(bearer(limited.apiKey)).expect(200);
    const refused = await post(limited.apiKey, chat());
    expectError(refused, 429, 'rate_limit_exceeded');
    expectRateLimitHeaders(refused, 2);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    const retryAfterS = Number(refused.headers['retry-after']);
    expect(retryAfterS).toBeGreaterThanOrEqual(1);
    expect(retryAfterS).toBeLessThanOrEqual(60);
    const other = await edge.api.get('/v1/models').set(bearer(limited.apiKey));
    expectError(other, 429, 'rate_limit_exceeded');
    expect(other.headers['retry-after']).toBeDefined();
  });

  it('500 GATEWAY_TIMEOUT: no reply in time; the job is cancelled and its hold voided', async () => {
    const patient = await fundAccount(billing.operator);
    const response = await post(patient.apiKey, chat('acme/slow'));
    expectError(response, 500, 'GATEWAY_TIMEOUT');
    expectRateLimitHeaders(response);
    const job = worker.jobs.find((j) => j.accountId === patient.accountId);
    expect(job).toBeDefined();
    await waitFor(() => worker.cancels.some((c) => c.jobId === job!.jobId));
    expect(worker.cancels.find((c) => c.jobId === job!.jobId)?.reason).toBe('timeout');
    expect(await balanceOf(billing, patient.accountId)).toMatchObject({
      balance_dzd: 10,
      reserved_dzd: 0,
    });
  });

  it('503 service_unavailable with Retry-After: past PUBLIC_REQUESTS_MAX, before authentication', async () => {
    // An edge taking one request at once, whose jobs nobody answers (no worker on its queues).
    const single = await startEdge(billing, { replyTimeoutMs: 1_500, requestsInProgress: 1 });
    try {
      const patient = await fundAccount(billing.operator);
      const held = single.api.post('/v1/chat/completions').set(bearer(patient.apiKey)).send(chat());
      const answered = held.then((response) => response);
      // Taken once the held request counts: from then on, /v1 is 503 for everyone.
      for (let tries = 0; (await single.api.get('/v1/models')).status !== 503; tries++) {
        if (tries > 100) throw new Error('the held request never counted');
      }
      const asked = billing.paths.length;
      const refused = await single.api
        .post('/v1/chat/completions')
        .set(bearer(patient.apiKey))
        .send(chat());
      expectError(refused, 503, 'service_unavailable');
      expect(refused.headers['retry-after']).toBe('1');
      // Refused for the gateway's load: not counted against the caller, billing not asked.
      expect(refused.headers['x-ratelimit-limit']).toBeUndefined();
      expect(billing.paths.length).toBe(asked);
      // The ops endpoints are not counted.
      expect((await single.api.get('/healthz')).status).toBe(200);

      expectError(await answered, 500, 'GATEWAY_TIMEOUT');
      expectError(await single.api.get('/v1/models'), 401, 'invalid_api_key');
      // Its hold is voided (the release may follow the answer).
      for (
        let tries = 0;
        (await balanceOf(billing, patient.accountId)).reserved_dzd !== 0;
        tries++
      ) {
        if (tries > 100) throw new Error('the held request kept its hold');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await single.close();
    }
  });
});

describe('every failure in the one error shape', () => {
  let tenant: FundedAccount;
  beforeAll(async () => {
    tenant = await fundAccount(billing.operator);
  });

  it('unknown routes: 404 not_found (401 first under /v1 without a credential)', async () => {
    const outside = await edge.api.get('/nope').set('X-Request-Id', 'trace-1');
    expectError(outside, 404, 'not_found');
    expect(outside.headers['x-request-id']).toBe('trace-1');
    const inside = await edge.api.get('/v1/nope').set(bearer(tenant.apiKey));
    expectError(inside, 404, 'not_found');
    expectRateLimitHeaders(inside);
    expectError(await edge.api.get('/v1/nope'), 401, 'invalid_api_key');
  });

  it('wrong methods: 405 method_not_allowed with Allow', async () => {
    const response = await edge.api.get('/v1/chat/completions').set(bearer(tenant.apiKey));
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe('POST');
    expectRateLimitHeaders(response);
    const jwtRoute = await edge.api.put('/v1/scoped-jwt').set(bearer(tenant.apiKey));
    expectError(jwtRoute, 405, 'method_not_allowed');
  });

  it('oversized bodies: 413 payload_too_large; other media types: 415', async () => {
    const huge = await post(tenant.apiKey, { ...chat(), pad: 'x'.repeat(100 * 1024) });
    expectError(huge, 413, 'payload_too_large');
    expectRateLimitHeaders(huge);
    const text = await edge.api
      .post('/v1/chat/completions')
      .set(bearer(tenant.apiKey))
      .set('Content-Type', 'text/plain')
      .send('hello');
    expectError(text, 415, 'unsupported_media_type');
  });

  it('serves the OpenAPI document without credentials', async () => {
    const response = await edge.api.get('/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(response.body.paths['/v1/chat/completions']).toBeDefined();
    expectError(await edge.api.post('/v1/openapi.json'), 405, 'method_not_allowed');
  });

  it('keeps a sane caller request id and makes one otherwise', async () => {
    const kept = await edge.api
      .get('/v1/models')
      .set(bearer(tenant.apiKey))
      .set('X-Request-Id', 'abc-1');
    expect(kept.headers['x-request-id']).toBe('abc-1');
    const made = await edge.api
      .get('/v1/models')
      .set(bearer(tenant.apiKey))
      .set('X-Request-Id', 'a b');
    expect(made.headers['x-request-id']).toMatch(/^req_/);
  });
});
