import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { clientToken, nowS } from '../testing/tokens.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/** Scoped tokens, balance and models: the routes that place no hold. */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenant: FundedAccount;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing);
  tenant = await fundAccount(billing.operator, { creditDzd: 12.5 });
  await putModel(billing, 'acme/chat-a');
  await putModel(billing, 'acme/chat-b');
  await putModel(billing, 'solo');
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

describe('scoped tokens', () => {
  it('creates, inspects (jwt and jwtoken) and revokes a token', async () => {
    const created = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(tenant.apiKey))
      .send({
        api_key_name: 'auto',
        models: ['acme/chat-a'],
        expires_delta: 3600,
        spending_limit: 2,
      });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ token: expect.stringMatching(/^jwt:[\w-]+\.[\w-]+\.[\w-]+$/) });
    const token = created.body.token as string;

    const inspected = await edge.api
      .get('/v1/scoped-jwt')
      .query({ jwt: token })
      .set(bearer(tenant.apiKey));
    expect(inspected.status).toBe(200);
    expect(inspected.body).toMatchObject({
      models: ['acme/chat-a'],
      spending_limit: 2,
      spent_dzd: 0,
      remaining_dzd: 2,
      revoked: false,
    });
    expect(inspected.body.expires_at).toBeGreaterThan(nowS() + 3500);
    const alias = await edge.api
      .get('/v1/scoped-jwt')
      .query({ jwtoken: token })
      .set(bearer(tenant.apiKey));
    expect(alias.body).toEqual(inspected.body);

    const revoked = await edge.api
      .delete('/v1/scoped-jwt')
      .query({ jwt: token })
      .set(bearer(tenant.apiKey));
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked).toBe(true);
    expect(revoked.headers['x-ratelimit-limit']).toBe('100');
  });

  it('inspects and revokes a token minted by the client itself', async () => {
    const token = clientToken(tenant, { exp: nowS() + 600, model: 'solo' });
    const inspected = await edge.api
      .get('/v1/scoped-jwt')
      .query({ jwt: token })
      .set(bearer(tenant.apiKey));
    expect(inspected.body).toMatchObject({ models: ['solo'], revoked: false });
    const revoked = await edge.api
      .delete('/v1/scoped-jwt')
      .query({ jwt: token })
      .set(bearer(tenant.apiKey));
    expect(revoked.body.revoked).toBe(true);
  });

  it('validates the creation body before billing sees it', async () => {
    const both = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(tenant.apiKey))
      .send({ api_key_name: 'auto', expires_delta: 10, expires_at: nowS() + 10 });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('invalid_request_body');
    const decimals = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(tenant.apiKey))
      .send({ api_key_name: 'auto', spending_limit: 0.0000001 });
    expect(decimals.body.error.param).toBe('spending_limit');
    const tooLong = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(tenant.apiKey))
      .send({ api_key_name: 'auto', expires_delta: 31_536_001 });
    expect(tooLong.body.error.param).toBe('expires_delta');
    const unknownKey = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(tenant.apiKey))
      .send({ api_key_name: 'nope' });
    expect(unknownKey.status).toBe(404);
    expect(unknownKey.body.error).toMatchObject({
      code: 'resource_not_found',
      param: 'api_key_name',
    });
  });

  it('needs the jwt query parameter, and an API key rather than a scoped token', async () => {
    const missing = await edge.api.get('/v1/scoped-jwt').set(bearer(tenant.apiKey));
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'invalid_request_body', param: 'jwt' });
    const token = clientToken(tenant, { exp: nowS() + 600 });
    const byToken = await edge.api
      .post('/v1/scoped-jwt')
      .set(bearer(token))
      .send({ api_key_name: 'auto' });
    expect(byToken.status).toBe(401);
    expect(byToken.body.error.code).toBe('invalid_api_key');
  });

  it("does not show another account's token", async () => {
    const other = await fundAccount(billing.operator);
    const token = clientToken(other, { exp: nowS() + 600 });
    const response = await edge.api
      .get('/v1/scoped-jwt')
      .query({ jwt: token })
      .set(bearer(tenant.apiKey));
    expect(response.status).toBe(404);
  });
});

describe('balance and models', () => {
  it('GET /v1/user/balance answers in DZD', async () => {
    const response = await edge.api.get('/v1/user/balance').set(bearer(tenant.apiKey));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      balance_dzd: 12.5,
      reserved_dzd: 0,
      available_dzd: 12.5,
      currency: 'DZD',
    });
    expect(response.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('GET /v1/models lists the catalog in the OpenAI shape', async () => {
    const response = await edge.api.get('/v1/models').set(bearer(tenant.apiKey));
    expect(response.status).toBe(200);
    expect(response.body.object).toBe('list');
    const ids = (response.body.data as { id: string }[]).map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['acme/chat-a', 'acme/chat-b', 'solo']));
    const model = (response.body.data as Record<string, unknown>[]).find(
      (m) => m.id === 'acme/chat-a',
    );
    expect(model).toEqual({
      id: 'acme/chat-a',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'acme',
    });
    const one = await edge.api.get('/v1/models/acme/chat-a').set(bearer(tenant.apiKey));
    expect(one.body).toEqual(model);
    const solo = await edge.api.get('/v1/models/solo').set(bearer(tenant.apiKey));
    expect(solo.body.owned_by).toBe('gateway');
    const missing = await edge.api.get('/v1/models/acme/none').set(bearer(tenant.apiKey));
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('model_not_found');
  });

  it('a scoped token restricted to some models sees only those', async () => {
    const token = clientToken(tenant, { exp: nowS() + 600, models: ['acme/chat-b'] });
    const response = await edge.api.get('/v1/models').set(bearer(token));
    expect((response.body.data as { id: string }[]).map((m) => m.id)).toEqual(['acme/chat-b']);
    const hidden = await edge.api.get('/v1/models/acme/chat-a').set(bearer(token));
    expect(hidden.status).toBe(404);
  });
});
