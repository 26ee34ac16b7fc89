import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import {
  putChatModel,
  startBillingApi,
  type ApiMethod,
  type BillingApiUnderTest,
} from './billing-api.suite.js';
import { fundAccount } from '@gateway/testing';

describe('billing internal API', () => {
  let billing: BillingApiUnderTest;
  const call = (method: ApiMethod, path: string, as?: 'edge' | 'worker') =>
    billing.call(method, path, as);

  beforeAll(async () => {
    // Entries are listed at once here (the stability window has tests of its own).
    billing = await startBillingApi({ entriesStableAfterMs: 0 });
  });

  afterAll(async () => {
    await billing?.close();
  });

  it('refuses calls without the internal service credential', async () => {
    const missing = await billing.api
      .post('/internal/v1/authenticate')
      .send({ authorization: 'Bearer x' });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('unauthorized');
    const wrong = await billing.api
      .get('/internal/v1/admin/models')
      .set(INTERNAL_TOKEN_HEADER, 'not-the-token');
    expect(wrong.status).toBe(401);
  });

  it('gives each caller only its own calls: the worker cannot reach the operator API', async () => {
    const asWorker = (method: ApiMethod, path: string) => billing.call(method, path, 'worker');
    for (const [method, path] of [
      ['get', '/admin/ledger/check'],
      ['post', '/admin/accounts'],
      ['post', '/authenticate'],
      ['post', '/admissions'],
      ['post', '/idempotency/claim'],
      ['get', '/accounts/any/balance'],
    ] as const) {
      const refused = await asWorker(method, path).send({});
      expect([path, refused.status, refused.body.error?.code]).toEqual([path, 403, 'forbidden']);
    }
    expect((await asWorker('get', '/models')).status).toBe(200);
    // Settling is the worker's alone: edge's credential cannot settle a hold.
    const bySettle = await call('post', '/holds/hld_x/settle').send({});
    expect([bySettle.status, bySettle.body.error.code]).toEqual([403, 'forbidden']);
    expect((await asWorker('post', '/holds/hld_x/settle').send({})).status).not.toBe(403);
  });

  it('runs the whole money path: account, key, credit once, admit, settle, statement, check', async () => {
    const account = await call('post', '/admin/accounts').send({ name: 'Acme' });
    expect(account.status).toBe(201);
    const accountId = account.body.id as string;
    const key = await call('post', `/admin/accounts/${accountId}/api-keys`).send({ name: 'auto' });
    expect(key.status).toBe(201);

    const credit = () =>
      call('post', `/admin/accounts/${accountId}/credits`)
        .set('Idempotency-Key', 'topup-1')
        .send({ amount_dzd: 10, reference: 'wire 42' });
    const [first, again] = [await credit(), await credit()];
    expect(first.body.balance_dzd).toBe(10);
    expect(again.body).toEqual(first.body);

    const model = await putChatModel(billing, {
      id: 'acme/chat-1',
      inputPriceDzdPerM: 100,
      outputPriceDzdPerM: 300,
      maxOutputTokens: 1000,
    });
    expect(model.status).toBe(200);
    // The catalog entry of the contract (CatalogEntry): its prices stay in billing.
    expect((await call('get', '/models/acme/chat-1')).body).toEqual({
      id: 'acme/chat-1',
      kind: 'chat',
      provider: 'node',
      protocol: 'openai',
      upstreamModel: expect.any(String),
      maxOutputTokens: 1000,
      nodes: expect.any(Array),
      updatedAt: expect.any(String),
    });

    const auth = await call('post', '/authenticate').send({
      authorization: `Bearer ${key.body.key}`,
    });
    expect(auth.status).toBe(200);
    expect(auth.body.caller).toEqual({
      accountId,
      kind: 'api_key',
      apiKeyName: 'auto',
      webhookFormat: 'A',
      tokenModels: null,
    });
    expect(auth.body.rateLimit).toMatchObject({ allowed: true, remaining: 99 });

    const admission = {
      authorization: `Bearer ${key.body.key}`,
      holdId: 'chatcmpl-api-test-1',
      model: 'acme/chat-1',
      estimate: { inputTokens: 1000, maxOutputTokens: 500, choices: 1 },
      priority: true,
    };
    const admitted = await call('post', '/admissions').send(admission);
    expect(admitted.status).toBe(200);
    expect(admitted.body.hold.id).toBe('chatcmpl-api-test-1');
    expect(admitted.body).toMatchObject({ replayed: false, caller: { accountId } });
    // Idempotent on the hold id: a retried admission returns the same hold, reserving nothing more.
    const retried = await call('post', '/admissions').send(admission);
    expect(retried.body).toMatchObject({ replayed: true, hold: admitted.body.hold });
    // Worst case at 100 / 300 DZD per million tokens, priority: (1000×100 + 500×300) × 1.2 / 10^6 DZD.
    expect(admitted.body.hold.amountMicroDzd).toBe('300000');
    const holdId = admitted.body.hold.id as string;

    const settled = await call('post', `/holds/${holdId}/settle`, 'worker').send({
      inputTokens: 1000,
      outputTokens: 100,
    });
    expect(settled.status).toBe(200);
    // Real usage: (1000×100 + 100×300) × 1.2 / 10^6 DZD = 0.156 DZD, below the hold.
    expect(settled.body.costMicroDzd).toBe('156000');
    // The contract's answer (SettleResponse), nothing of the journal.
    expect(settled.body).toEqual({
      holdId,
      costMicroDzd: '156000',
      releasedMicroDzd: '144000',
      balance: {
        balanceMicroDzd: '9844000',
        pendingMicroDzd: '0',
        availableMicroDzd: '9844000',
      },
      replayed: false,
    });
    const replay = await call('post', `/holds/${holdId}/settle`, 'worker').send({
      inputTokens: 1000,
      outputTokens: 999,
    });
    expect(replay.body.costMicroDzd).toBe('156000');
    const voidAfterSettle = await call('post', `/holds/${holdId}/void`);
    expect(voidAfterSettle.status).toBe(409);

    const balance = await call('get', `/accounts/${accountId}/balance`);
    expect(balance.body).toEqual({
      balance_dzd: 9.844,
      reserved_dzd: 0,
      available_dzd: 9.844,
      currency: 'DZD',
    });

    // The operator API speaks snake_case, money as exact µDZD strings.
    const statement = await call('get', `/admin/accounts/${accountId}/statement`);
    expect(statement.body).toMatchObject({
      account_id: accountId,
      opening_balance_micro_dzd: '0',
      closing_balance_micro_dzd: '9844000',
    });
    expect(statement.body.lines).toEqual([
      expect.objectContaining({ kind: 'credit', amount_micro_dzd: '10000000' }),
      expect.objectContaining({
        kind: 'hold_settlement',
        hold_id: holdId,
        amount_micro_dzd: '-156000',
        balance_after_micro_dzd: '9844000',
      }),
    ]);
    const entries = await call('get', `/admin/ledger/entries?account=${accountId}`);
    expect(entries.body.entries).toContainEqual(
      expect.objectContaining({
        account_id: accountId,
        amount_micro_dzd: '-156000',
        amount_dzd: -0.156,
      }),
    );
    const keys = await call('get', `/admin/accounts/${accountId}/api-keys`);
    expect(keys.body.api_keys).toEqual([
      expect.objectContaining({ name: 'auto', created_at: expect.any(String) }),
    ]);
    // Written off the request's path: null until that write landed.
    expect(keys.body.api_keys[0]).toHaveProperty('last_used_at');

    const csv = await call('get', `/admin/accounts/${accountId}/statement`).set(
      'Accept',
      'text/csv',
    );
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.text.split('\n').length).toBeGreaterThanOrEqual(3);

    const check = await call('get', '/admin/ledger/check');
    expect(check.body).toEqual({ ok: true, violations: [] });
  });

  it("sets and reads an API key's models; refuses a bad list and an unknown key", async () => {
    const account = await call('post', '/admin/accounts').send({ name: 'Listed models' });
    const accountId = account.body.id as string;
    await call('post', `/admin/accounts/${accountId}/api-keys`).send({ name: 'prod' });
    const path = `/admin/accounts/${accountId}/api-keys/prod/models`;
    expect((await call('get', path)).body).toEqual({
      object: 'api_key_models',
      api_key: 'prod',
      models: [],
    });
    const put = await call('put', path).send({ models: ['org/b', 'org/a'] });
    expect([put.status, put.body.models]).toEqual([200, ['org/a', 'org/b']]);
    expect((await call('get', path)).body.models).toEqual(['org/a', 'org/b']);
    for (const body of [{ models: ['org/a', 'org/a'] }, { models: [''] }, {}, { models: 'x' }]) {
      const refused = await call('put', path).send(body);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_request_body']);
    }
    const tooMany = Array.from({ length: 257 }, (_, i) => `org/m${i}`);
    expect((await call('put', path).send({ models: tooMany })).status).toBe(400);
    const unknown = await call('get', `/admin/accounts/${accountId}/api-keys/nokey/models`);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'resource_not_found']);
  });

  it('refuses a credit amount it cannot book exactly with 400, naming amount_dzd', async () => {
    const account = await call('post', '/admin/accounts').send({ name: 'Exact' });
    const accountId = account.body.id as string;
    // A seventh decimal, as a number and as a string (a 500 from the conversion, once), and the
    // shapes the operator contract refuses.
    for (const amount of [0.1234567, '1.1234567', -1, 0, '1e3', 'abc', 2_000_000_000]) {
      const refused = await call('post', `/admin/accounts/${accountId}/credits`)
        .set('Idempotency-Key', `exact-${String(amount)}`)
        .send({ amount_dzd: amount, reference: 'exact' });
      expect([amount, refused.status, refused.body.error?.code]).toEqual([
        amount,
        400,
        'invalid_request_body',
      ]);
      expect(refused.body.error.param).toMatch(/^amount_dzd/);
    }
    const booked = await call('post', `/admin/accounts/${accountId}/credits`)
      .set('Idempotency-Key', 'exact-ok')
      .send({ amount_dzd: '0.000001', reference: 'exact' });
    expect([booked.status, booked.body.balance_dzd]).toEqual([200, 0.000001]);
  });

  it('marks the holds of queued jobs published in one batch: pending ones only, bounded', async () => {
    const { apiKey: key } = await fundAccount(billing.operator, {
      name: 'Batch',
      keyName: 'b',
      credit: { idempotencyKey: 'batch-topup', reference: 'batch' },
    });
    await putChatModel(billing, {
      id: 'acme/batch-1',
      inputPriceDzdPerM: 1,
      outputPriceDzdPerM: 1,
      maxOutputTokens: 100,
    });
    const admit = async (holdId: string) =>
      call('post', '/admissions').send({
        authorization: `Bearer ${key}`,
        holdId,
        model: 'acme/batch-1',
        estimate: { inputTokens: 10, maxOutputTokens: 10, choices: 1 },
        priority: false,
      });
    for (const holdId of ['hld-batch-1', 'hld-batch-2', 'hld-batch-3']) {
      expect((await admit(holdId)).status).toBe(200);
    }
    const voided = await call('post', '/holds/hld-batch-2/void');
    expect({ status: voided.status, body: voided.body }).toEqual({
      status: 200,
      body: { holdId: 'hld-batch-2', status: 'voided', replayed: false },
    });
    const expiresAtMs = Date.now() + 3_600_000;
    const marks = ['hld-batch-1', 'hld-batch-2', 'hld-batch-3', 'hld-unknown'].map((holdId) => ({
      holdId,
      expiresAtMs,
    }));
    const marked = await call('post', '/holds/published').send({ holds: marks });
    expect(marked.status).toBe(200);
    expect([...marked.body.published].sort()).toEqual(['hld-batch-1', 'hld-batch-3']);

    const refused = async (body: unknown, as?: 'worker') => {
      const answer = await call('post', '/holds/published', as).send(body as object);
      return [answer.status, answer.body.error?.code];
    };
    const tooMany = Array.from({ length: 257 }, (_, i) => ({ holdId: `h${i}`, expiresAtMs }));
    expect(await refused({ holds: tooMany })).toEqual([400, 'invalid_request_body']);
    expect(await refused({ holds: [] })).toEqual([400, 'invalid_request_body']);
    const nextMonth = Date.now() + 30 * 86_400_000;
    expect(await refused({ holds: [{ holdId: 'hld-batch-1', expiresAtMs: nextMonth }] })).toEqual([
      400,
      'invalid_request_body',
    ]);
    expect(await refused({ holds: marks }, 'worker')).toEqual([403, 'forbidden']);
  });

  it('answers each item of a batch as its single route would, in one call', async () => {
    const { accountId, apiKey: key } = await fundAccount(billing.operator, {
      name: 'Batches',
      keyName: 'b',
      credit: { idempotencyKey: 'batches-topup', reference: 'batches' },
    });
    // 1 000 DZD per million tokens: 3 000 in + 1 000 out hold 4 DZD of the 10 credited.
    await putChatModel(billing, {
      id: 'acme/batches-1',
      inputPriceDzdPerM: 1000,
      outputPriceDzdPerM: 1000,
      maxOutputTokens: 1000,
    });
    const admission = (holdId: string, credential = key) => ({
      authorization: `Bearer ${credential}`,
      holdId,
      model: 'acme/batches-1',
      estimate: { inputTokens: 3000, maxOutputTokens: 1000, choices: 1 },
      priority: false,
    });
    const admitted = await call('post', '/admissions/batch').send({
      items: [
        admission('hld-b-1'),
        admission('hld-b-2', `sk_live_${'A'.repeat(43)}`),
        admission('hld-b-3'),
        admission('hld-b-4'),
      ],
    });
    expect(admitted.status).toBe(200);
    const answers = admitted.body.answers as {
      status: number;
      headers?: Record<string, string>;
      body: { error?: { code: string }; hold?: { amountMicroDzd: string } };
    }[];
    expect(
      answers.map((a) => [a.status, a.body.error?.code ?? a.body.hold?.amountMicroDzd]),
    ).toEqual([
      [200, '4000000'],
      [401, 'invalid_api_key'],
      [200, '4000000'],
      [402, 'insufficient_balance'],
    ]);
    expect(answers[0]?.body).toMatchObject({ caller: { accountId }, replayed: false });
    // The refusal after the rate-limit step carries its decision, as the single route's headers.
    expect(answers[3]?.headers).toMatchObject({
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '97',
    });

    const settled = await call('post', '/holds/settlements', 'worker').send({
      items: [
        { holdId: 'hld-b-1', usage: { inputTokens: 3000, outputTokens: 10 } },
        { holdId: 'hld-b-missing', usage: { inputTokens: 1, outputTokens: 1 } },
      ],
    });
    expect(settled.status).toBe(200);
    expect(
      settled.body.answers.map((a: { status: number; body: Record<string, unknown> }) => [
        a.status,
        a.body.costMicroDzd ?? (a.body.error as { code: string }).code,
      ]),
    ).toEqual([
      [200, '3010000'],
      [404, 'resource_not_found'],
    ]);
    const voided = await call('post', '/holds/voids').send({
      items: [{ holdId: 'hld-b-3', usage: { outcome: 'cancelled' } }, { holdId: 'hld-b-1' }],
    });
    expect(
      voided.body.answers.map((a: { status: number; body: Record<string, unknown> }) => [
        a.status,
        a.body.status ?? (a.body.error as { code: string }).code,
      ]),
    ).toEqual([
      [200, 'voided'],
      [409, 'conflict'],
    ]);

    const refused = async (path: string, body: unknown, as?: 'worker') => {
      const answer = await call('post', path, as).send(body as object);
      return [answer.status, answer.body.error?.code];
    };
    const tooMany = Array.from({ length: 33 }, (_, i) => admission(`hld-b-many-${i}`));
    expect(await refused('/admissions/batch', { items: tooMany })).toEqual([
      400,
      'invalid_request_body',
    ]);
    expect(await refused('/admissions/batch', { items: [] })).toEqual([
      400,
      'invalid_request_body',
    ]);
    expect(await refused('/admissions/batch', { items: [admission('x')] }, 'worker')).toEqual([
      403,
      'forbidden',
    ]);
    const settle = { items: [{ holdId: 'hld-b-3', usage: { inputTokens: 1, outputTokens: 1 } }] };
    expect(await refused('/holds/settlements', settle)).toEqual([403, 'forbidden']);
  });

  it('issues scoped tokens that authenticate and are held to their model list', async () => {
    const account = await call('post', '/admin/accounts').send({ name: 'Scoped' });
    const accountId = account.body.id as string;
    const key = await call('post', `/admin/accounts/${accountId}/api-keys`).send({ name: 'auto' });
    await call('post', `/admin/accounts/${accountId}/credits`).send({ amount_dzd: 1 });
    const issued = await call('post', `/accounts/${accountId}/scoped-tokens`).send({
      api_key_name: 'auto',
      models: ['acme/other'],
      spending_limit: 0.5,
    });
    expect(issued.status).toBe(201);
    expect(issued.body.token).toMatch(/^jwt:/);
    const auth = await call('post', '/authenticate').send({
      authorization: `Bearer ${issued.body.token}`,
    });
    await call('put', '/admin/models/acme/chat-2').send({
      kind: 'chat',
      provider: 'node',
      upstream_model: 'chat-2',
      input_price_dzd_per_m: 1,
      output_price_dzd_per_m: 1,
      max_output_tokens: 10,
    });
    expect(auth.body.caller).toMatchObject({ kind: 'scoped_token', tokenModels: ['acme/other'] });
    const refused = await call('post', '/admissions').send({
      authorization: `Bearer ${issued.body.token}`,
      holdId: 'chatcmpl-api-test-2',
      model: 'acme/chat-2',
      estimate: { inputTokens: 1, maxOutputTokens: null, choices: 1 },
      priority: false,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('model_not_allowed');
    expect(refused.body.error.message).toContain('acme/other');

    const revoked = await call('post', `/accounts/${accountId}/scoped-tokens/revoke`).send({
      token: issued.body.token,
    });
    expect(revoked.body.revoked).toBe(true);
    const after = await call('post', '/authenticate').send({
      authorization: `Bearer ${issued.body.token}`,
    });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('token_revoked');
    expect(key.status).toBe(201);
  });
});
