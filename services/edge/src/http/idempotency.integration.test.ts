import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fundAccount, uniquePrefix, type FundedAccount } from '@gateway/testing';
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

/** Idempotency-Key (decisions §3) across two edge processes sharing billing. */

let billing: BillingUnderTest;
let edgeA: EdgeUnderTest;
let edgeB: EdgeUnderTest;
let worker: FakeWorker;
let tenant: FundedAccount;
const attempts = new Map<string, number>();

const chat = (content: string, extra: object = {}) => ({
  model: 'acme/chat',
  messages: [{ role: 'user', content }],
  ...extra,
});
const send = (edge: EdgeUnderTest, key: string, body: object) =>
  edge.api
    .post('/v1/chat/completions')
    .set(bearer(tenant.apiKey))
    .set('Idempotency-Key', key)
    .send(body);

beforeAll(async () => {
  billing = await startBilling();
  const prefix = uniquePrefix('idem');
  // Short: the lost-answer case waits for edge to give up.
  edgeA = await startEdge(billing, { prefix, replyTimeoutMs: 2_000 });
  edgeB = await startEdge(billing, { prefix });
  worker = await startFakeWorker(edgeA.bus, edgeA.names, billing, (job): Step[] => {
    const content = String((job.request.messages as { content: string }[])[0]?.content);
    const attempt = (attempts.get(content) ?? 0) + 1;
    attempts.set(content, attempt);
    if (content === 'flaky' && attempt === 1) return [{ type: 'error', code: 'GATEWAY_TIMEOUT' }];
    if (content === 'slow') return [{ wait: 500 }, { type: 'final', data: chatCompletion(job) }];
    if (job.stream) return [{ type: 'final', data: chatChunk(job, null, true) }];
    // Settled, then lost with edge's reply queue.
    const lost = content === 'lost' && attempt === 1;
    return [{ type: 'final', data: chatCompletion(job, `answer ${attempt}`), lost }];
  });
  await putModel(billing, 'acme/chat');
  tenant = await fundAccount(billing.operator);
});

afterAll(async () => {
  await worker?.stop();
  await edgeA?.close();
  await edgeB?.close();
  await billing?.close();
});

describe('Idempotency-Key', () => {
  it('replays the first answer and charges once, on any edge', async () => {
    const first = await send(edgeA, 'order-1', chat('once'));
    expect(first.status).toBe(200);
    const balance = await balanceOf(billing, tenant.accountId);
    const again = await send(edgeA, 'order-1', chat('once'));
    const elsewhere = await send(edgeB, 'order-1', chat('once'));
    for (const replay of [again, elsewhere]) {
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(first.body);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    }
    expect(attempts.get('once')).toBe(1);
    expect(await balanceOf(billing, tenant.accountId)).toEqual(balance);
    // A replay is still a request: it counts against the rate limit (in the first request's
    // window, or in a new one when the minute turned between them: CI once saw that).
    const header = (answer: typeof first, name: string) => Number(answer.headers[name]);
    const sameWindow =
      header(elsewhere, 'x-ratelimit-reset') === header(first, 'x-ratelimit-reset');
    expect(header(elsewhere, 'x-ratelimit-remaining')).toBeLessThan(
      sameWindow ? header(first, 'x-ratelimit-remaining') : header(elsewhere, 'x-ratelimit-limit'),
    );
  });

  it('refuses the key with another body: 409 idempotency_key_conflict', async () => {
    await send(edgeA, 'order-2', chat('first body')).expect(200);
    const other = await send(edgeB, 'order-2', chat('second body'));
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: 'idempotency_key_conflict',
      param: 'Idempotency-Key',
    });
    expect(other.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('refuses a duplicate while the first is in progress: 409 conflict', async () => {
    const [one, two] = await Promise.all([
      send(edgeA, 'order-3', chat('slow')),
      new Promise((r) => setTimeout(r, 100)).then(() => send(edgeB, 'order-3', chat('slow'))),
    ]);
    expect(one.status).toBe(200);
    expect(two.status).toBe(409);
    expect(two.body.error.code).toBe('conflict');
    expect(attempts.get('slow')).toBe(1);
  });

  it('frees the key after an error: nothing was charged, the retry runs', async () => {
    const failed = await send(edgeA, 'order-4', chat('flaky'));
    expect(failed.status).toBe(500);
    const retried = await send(edgeB, 'order-4', chat('flaky'));
    expect(retried.status).toBe(200);
    expect(retried.body.choices[0].message.content).toBe('answer 2');
  });

  it('refunds an answer settled but lost on its way, then runs the retry once: charged once', async () => {
    const before = await balanceOf(billing, tenant.accountId);
    const first = await send(edgeA, 'order-6', chat('lost'));
    expect(first.status).toBe(500);
    expect(first.body.error.code).toBe('GATEWAY_TIMEOUT');
    // Edge gave up, found the hold settled and refunded it: nothing charged, the key is free.
    expect(await balanceOf(billing, tenant.accountId)).toEqual(before);
    const retry = await send(edgeB, 'order-6', chat('lost'));
    expect(retry.status).toBe(200);
    expect(retry.body.choices[0].message.content).toBe('answer 2');
    const after = await balanceOf(billing, tenant.accountId);
    expect(after.balance_dzd).toBeCloseTo(before.balance_dzd - retry.body._service.cost_dzd, 6);
    const replay = await send(edgeA, 'order-6', chat('lost'));
    expect(replay.body).toEqual(retry.body);
    expect(attempts.get('lost')).toBe(2);
  });

  it('spends the key of a stream: a retry is 409, never a second charge', async () => {
    const stream = await send(edgeA, 'order-5', chat('stream me', { stream: true }));
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('[DONE]');
    const retry = await send(edgeA, 'order-5', chat('stream me', { stream: true }));
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('conflict');
    expect(attempts.get('stream me')).toBe(1);
  });

  it('mints one scoped token per key', async () => {
    const mint = () =>
      edgeA.api
        .post('/v1/scoped-jwt')
        .set(bearer(tenant.apiKey))
        .set('Idempotency-Key', 'token-1')
        .send({ api_key_name: 'auto' });
    const [first, second] = [await mint(), await mint()];
    expect(first.status).toBe(200);
    expect(second.body.token).toBe(first.body.token);
  });

  it('refuses a malformed key with 400', async () => {
    const response = await send(edgeA, 'has space', chat('x'));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'invalid_request_body',
      param: 'Idempotency-Key',
    });
  });
});
