import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount } from '@gateway/testing';

/**
 * The operator API through edge: the admin token, then billing's operator API and the
 * dispatcher's webhook routes passed through. The dispatcher is a recording stand-in here (its
 * own tests are its owner's); billing is real.
 */

interface Recorded {
  method: string;
  url: string;
  token: string | undefined;
  requestId: string | undefined;
  body: unknown;
}

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let dispatcher: Server;
const recorded: Recorded[] = [];
const dispatcherToken = 'x'.repeat(40);
/** The stand-in's next answer when set (then cleared); 200 otherwise. */
let nextAnswer: { status: number; headers: Record<string, string>; body: unknown } | undefined;

async function startDispatcherStub(): Promise<string> {
  const app = express();
  app.use(express.json());
  app.use((req, res) => {
    recorded.push({
      method: req.method,
      url: req.originalUrl,
      token: req.get('X-Internal-Token'),
      requestId: req.get('X-Request-Id'),
      body: req.body,
    });
    if (req.get('X-Internal-Token') !== dispatcherToken) {
      res
        .status(401)
        .json({ error: { message: 'no', type: 'service_error', code: 'unauthorized' } });
      return;
    }
    if (nextAnswer) {
      const { status, headers, body } = nextAnswer;
      nextAnswer = undefined;
      res.status(status).set(headers).json(body);
      return;
    }
    res.status(200).json({ ok: true, path: req.path });
  });
  dispatcher = await new Promise<Server>((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
  return `http://127.0.0.1:${(dispatcher.address() as AddressInfo).port}`;
}

const admin = () => ({ Authorization: `Bearer ${edge.adminToken}` });

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { dispatcherUrl: await startDispatcherStub(), dispatcherToken });
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
  await new Promise((resolve) => dispatcher?.close(resolve));
});

describe('admin token', () => {
  it('refuses a missing or wrong token with 401 unauthorized', async () => {
    const missing = await edge.api.get('/admin/v1/models');
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('unauthorized');
    const wrong = await edge.api.get('/admin/v1/models').set(bearer('y'.repeat(48)));
    expect(wrong.status).toBe(401);
    const apiKeyScheme = await edge.api
      .get('/admin/v1/models')
      .set('Authorization', edge.adminToken);
    expect(apiKeyScheme.status).toBe(401);
  });
});

describe('billing operator API through edge', () => {
  it('runs an account from creation to suspension', async () => {
    const created = await edge.api.post('/admin/v1/accounts').set(admin()).send({ name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme', status: 'active' });
    const id = created.body.id as string;

    const key = await edge.api
      .post(`/admin/v1/accounts/${id}/api-keys`)
      .set(admin())
      .send({ name: 'main' });
    expect(key.status).toBe(201);
    expect(key.body.key).toMatch(/^sk_live_/);
    const regenerated = await edge.api
      .post(`/admin/v1/accounts/${id}/api-keys/main/regenerate`)
      .set(admin());
    expect(regenerated.body.key).not.toBe(key.body.key);
    expect((await edge.api.get('/v1/user/balance').set(bearer(key.body.key))).status).toBe(401);
    expect((await edge.api.get('/v1/user/balance').set(bearer(regenerated.body.key))).status).toBe(
      200,
    );

    const credit = () =>
      edge.api
        .post(`/admin/v1/accounts/${id}/credits`)
        .set(admin())
        .set('Idempotency-Key', 'wire-7')
        .send({ amount_dzd: 25.5, reference: 'wire 7' });
    const [first, again] = [await credit(), await credit()];
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(first.body.balance_dzd).toBe(25.5);
    // The operator contract's amount (6 decimals at most), the dashboard's too: edge once took
    // 12 and billing then failed with 500.
    const sevenDecimals = await edge.api
      .post(`/admin/v1/accounts/${id}/credits`)
      .set(admin())
      .set('Idempotency-Key', 'wire-8')
      .send({ amount_dzd: '1.1234567' });
    expect([sevenDecimals.status, sevenDecimals.body.error.code]).toEqual([
      400,
      'invalid_request_body',
    ]);

    const patched = await edge.api
      .patch(`/admin/v1/accounts/${id}`)
      .set(admin())
      .send({ rate_limit_per_minute: 7, webhook_format: 'B' });
    expect(patched.body).toMatchObject({ rate_limit_per_minute: 7, webhook_format: 'B' });
    const account = await edge.api.get(`/admin/v1/accounts/${id}`).set(admin());
    expect(account.body).toMatchObject({ balance_dzd: 25.5, reserved_dzd: 0, status: 'active' });

    expect((await edge.api.post(`/admin/v1/accounts/${id}/suspend`).set(admin())).body.status).toBe(
      'suspended',
    );
    expect(
      (await edge.api.post(`/admin/v1/accounts/${id}/unsuspend`).set(admin())).body.status,
    ).toBe('active');
    const deleted = await edge.api.delete(`/admin/v1/accounts/${id}/api-keys/main`).set(admin());
    expect(deleted.status).toBe(204);
    const listed = await edge.api.get(`/admin/v1/accounts/${id}/api-keys`).set(admin());
    expect(listed.body.api_keys).toEqual([]);

    const statement = await edge.api
      .get(`/admin/v1/accounts/${id}/statement`)
      .query({ from: '2000-01-01T00:00:00Z' })
      .set(admin())
      .set('Accept', 'text/csv');
    expect(statement.headers['content-type']).toContain('text/csv');
    expect(statement.text).toContain('25.500000');
  });

  it('manages the catalog, with model ids containing /', async () => {
    const put = await edge.api
      .put('/admin/v1/models/meta-llama/Llama-3.1-8B')
      .set(admin())
      .send({
        kind: 'chat',
        provider: 'node',
        upstream_model: 'llama',
        input_price_dzd_per_m: 150,
        output_price_dzd_per_m: 600,
        max_output_tokens: 8192,
        nodes: [{ url: 'http://127.0.0.1:9' }],
      });
    expect(put.status).toBe(200);
    expect(put.body.id).toBe('meta-llama/Llama-3.1-8B');
    const list = await edge.api.get('/admin/v1/models').set(admin());
    expect(list.body.models.map((m: { id: string }) => m.id)).toContain('meta-llama/Llama-3.1-8B');
  });

  it('drops its cached model listing when the catalog changes through it', async () => {
    const tenant = await fundAccount(billing.operator);
    const listed = async () =>
      (await edge.api.get('/v1/models').set(bearer(tenant.apiKey))).body.data.map(
        (m: { id: string }) => m.id,
      );
    const before = await listed();
    expect(before).not.toContain('acme/fresh');
    const put = await edge.api.put('/admin/v1/models/acme/fresh').set(admin()).send({
      kind: 'chat',
      provider: 'node',
      upstream_model: 'fresh',
      input_price_dzd_per_m: 1,
      output_price_dzd_per_m: 1,
      max_output_tokens: 16,
    });
    expect(put.status).toBe(200);
    // The listing is cached for 30 s in this edge; the change through it is visible at once.
    expect(await listed()).toContain('acme/fresh');
  });

  it('serves the finance endpoints', async () => {
    const check = await edge.api.get('/admin/v1/ledger/check').set(admin());
    expect(check.body).toEqual({ ok: true, violations: [] });
    const entries = await edge.api.get('/admin/v1/ledger/entries').set(admin());
    expect(entries.status).toBe(200);
    expect(Array.isArray(entries.body.entries)).toBe(true);
  });

  it("passes billing's refusals through and checks body shapes itself", async () => {
    const unknown = await edge.api.get('/admin/v1/accounts/usr_nope').set(admin());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('resource_not_found');
    const bad = await edge.api.post('/admin/v1/accounts').set(admin()).send({ nme: 'typo' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request_body', param: 'name' });
    const badModel = await edge.api
      .put('/admin/v1/models/a/b')
      .set(admin())
      .send({ kind: 'toaster' });
    expect(badModel.status).toBe(400);
  });

  it('answers unknown admin routes 404 and wrong methods 405', async () => {
    const unknown = await edge.api.get('/admin/v1/nothing').set(admin());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const wrong = await edge.api.delete('/admin/v1/models').set(admin());
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET');
    const dots = await edge.api.post('/admin/v1/accounts/%2e%2e/suspend').set(admin());
    expect(dots.status).toBe(404);
  });
});

describe('dispatcher webhook routes through edge', () => {
  it('proxies secrets, rotation, deliveries and redelivery with the internal credential', async () => {
    const account = await edge.api.post('/admin/v1/accounts').set(admin()).send({ name: 'Hooks' });
    const id = account.body.id as string;
    recorded.length = 0;
    const calls = [
      ['get', `/accounts/${id}/webhook-secrets`, `/accounts/${id}/webhook-secrets`],
      ['post', `/accounts/${id}/webhook-secrets/rotate`, `/accounts/${id}/webhook-secrets/rotate`],
      [
        'post',
        `/accounts/${id}/webhook-secrets/expire-previous`,
        `/accounts/${id}/webhook-secrets/expire-previous`,
      ],
      [
        'get',
        `/accounts/${id}/webhook-deliveries?limit=5`,
        `/accounts/${id}/webhook-deliveries?limit=5`,
      ],
      ['post', '/webhook-deliveries/whd_9/redeliver', '/webhook-deliveries/whd_9/redeliver'],
    ] as const;
    for (const [method, path, target] of calls) {
      const response = await edge.api[method](`/admin/v1${path}`)
        .set(admin())
        .set('X-Request-Id', `op-${method}`);
      expect(response.status).toBe(200);
      // The request id follows the request to the dispatcher.
      expect(recorded.at(-1)).toMatchObject({
        method: method.toUpperCase(),
        url: `/internal/v1${target}`,
        token: dispatcherToken,
        requestId: `op-${method}`,
      });
    }
  });

  it("passes the dispatcher's rotation limit through: 429 with its Retry-After", async () => {
    const account = await edge.api.post('/admin/v1/accounts').set(admin()).send({ name: 'Busy' });
    const refusal = {
      error: {
        message: 'At most 5 webhook secret rotations per hour; retry later',
        type: 'service_error',
        code: 'rate_limit_exceeded',
      },
    };
    nextAnswer = { status: 429, headers: { 'Retry-After': '1234' }, body: refusal };
    const response = await edge.api
      .post(`/admin/v1/accounts/${account.body.id}/webhook-secrets/rotate`)
      .set(admin());
    expect(response.status).toBe(429);
    expect(response.headers['retry-after']).toBe('1234');
    expect(response.body).toEqual(refusal);
  });

  it('checks at billing that the account exists before calling the dispatcher', async () => {
    recorded.length = 0;
    const response = await edge.api
      .post('/admin/v1/accounts/usr_nobody/webhook-secrets/rotate')
      .set(admin());
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('resource_not_found');
    expect(recorded).toEqual([]);
  });
});
