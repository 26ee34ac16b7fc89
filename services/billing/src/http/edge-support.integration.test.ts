import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startBillingApi, type ApiMethod, type BillingApiUnderTest } from './billing-api.suite.js';

/** What billing offers edge beyond the basic internal API: admit filters, headers, idempotency. */

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

describe('billing internal API for edge', () => {
  let billing: BillingApiUnderTest;
  const call = (method: ApiMethod, path: string) => billing.call(method, path);

  async function tenant(options: { creditDzd?: number; rateLimit?: number } = {}) {
    const account = await call('post', '/admin/accounts').send({ name: 'Edge' });
    const accountId = account.body.id as string;
    if (options.rateLimit !== undefined) {
      await call('patch', `/admin/accounts/${accountId}`).send({
        rate_limit_per_minute: options.rateLimit,
      });
    }
    const key = await call('post', `/admin/accounts/${accountId}/api-keys`).send({ name: 'k' });
    if (options.creditDzd !== 0) {
      await call('post', `/admin/accounts/${accountId}/credits`).send({
        amount_dzd: options.creditDzd ?? 10,
      });
    }
    return { accountId, principal: `Bearer ${key.body.key as string}` };
  }

  beforeAll(async () => {
    billing = await startBillingApi();
    const model = (kind: string, provider: string) => ({
      kind,
      provider,
      upstream_model: 'u',
      input_price_dzd_per_m: 100,
      output_price_dzd_per_m: 100,
      max_output_tokens: 100,
    });
    await call('put', '/admin/models/org/chat').send(model('chat', 'node'));
    await call('put', '/admin/models/ext/chat').send(model('chat', 'external'));
    await call('put', '/admin/models/org/embed').send(model('embedding', 'node'));
  });

  afterAll(async () => {
    await billing?.close();
  });

  describe('admit filters by provider and kind', () => {
    const admit = (authorization: string, model: string, extra: Record<string, unknown>) =>
      call('post', '/admissions').send({
        authorization,
        holdId: `hold-${randomUUID()}`,
        model,
        estimate: { inputTokens: 10, maxOutputTokens: null, choices: 1 },
        priority: false,
        ...extra,
      });

    it('refuses an external model on a default-models-only route with 404, placing no hold', async () => {
      const { accountId, principal } = await tenant();
      const refused = await admit(principal, 'ext/chat', { providers: ['node'] });
      expect(refused.status).toBe(404);
      expect(refused.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
      expect(refused.headers['x-ratelimit-remaining']).toBe('99');
      const balance = await call('get', `/accounts/${accountId}/balance`);
      expect(balance.body.reserved_dzd).toBe(0);
      expect((await admit(principal, 'org/chat', { providers: ['node'] })).status).toBe(200);
      expect((await admit(principal, 'ext/chat', {})).status).toBe(200);
    });

    it('refuses a model of another kind than the endpoint serves', async () => {
      const { principal } = await tenant();
      const refused = await admit(principal, 'org/chat', { kinds: ['embedding'] });
      expect(refused.status).toBe(404);
      expect(refused.body.error.message).toContain('not available on this endpoint');
      expect((await admit(principal, 'org/embed', { kinds: ['embedding'] })).status).toBe(200);
    });

    it('refuses malformed filters with 400', async () => {
      const { principal } = await tenant();
      const bad = await admit(principal, 'org/chat', { providers: ['moon'] });
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toMatch(/^providers/);
      expect((await admit(principal, 'org/chat', { kinds: 'chat' })).status).toBe(400);
    });
  });

  describe('rate-limit headers on errors', () => {
    it('sends X-RateLimit-* with admission refusals and Retry-After with 429', async () => {
      const { principal } = await tenant({ creditDzd: 0, rateLimit: 2 });
      const broke = await call('post', '/admissions').send({
        authorization: principal,
        holdId: `hold-${randomUUID()}`,
        model: 'org/chat',
        estimate: { inputTokens: 10, maxOutputTokens: null, choices: 1 },
        priority: false,
      });
      expect(broke.status).toBe(402);
      expect(broke.headers['x-ratelimit-limit']).toBe('2');
      expect(broke.headers['x-ratelimit-remaining']).toBe('1');
      expect(Number(broke.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now());
      expect(broke.headers['retry-after']).toBeUndefined();
      const authenticate = () => call('post', '/authenticate').send({ authorization: principal });
      // Authenticating without counting leaves the window as it is.
      const peeked = await call('post', '/authenticate').send({
        authorization: principal,
        count: false,
      });
      expect(peeked.body.rateLimit).toMatchObject({ allowed: true, remaining: 0 });
      expect((await authenticate()).status).toBe(200);
      const limited = await authenticate();
      expect(limited.status).toBe(429);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });
  });

  describe('request idempotency store', () => {
    const ref = (accountId: string, key: string, body = 'a') => ({
      accountId,
      key,
      requestHash: hash(body),
    });
    const claim = (r: object, leaseMs = 60_000) =>
      call('post', '/idempotency/claim').send({ ...r, leaseMs });
    const response = { status: 200, contentType: 'application/json', body: '{"ok":1}' };

    it('claims once, replays the stored response, refuses another body and a claim in progress', async () => {
      const first = ref('usr_a', 'k-1');
      expect((await claim(first)).body).toEqual({ outcome: 'claimed' });
      const busy = await claim(first);
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('conflict');
      const completed = await call('post', '/idempotency/complete').send({
        ...first,
        response: { ...response, encoding: 'utf8' },
      });
      expect(completed.status).toBe(204);
      const replay = await claim(first);
      expect(replay.body).toEqual({
        outcome: 'replay',
        response: { ...response, encoding: 'utf8' },
      });
      const other = await claim(ref('usr_a', 'k-1', 'b'));
      expect(other.status).toBe(409);
      expect(other.body.error.code).toBe('idempotency_key_conflict');
      // Keys are per account.
      expect((await claim(ref('usr_b', 'k-1', 'b'))).body.outcome).toBe('claimed');
    });

    it('frees a released claim and takes over an expired lease', async () => {
      const released = ref('usr_c', 'k-2');
      await claim(released);
      expect((await call('post', '/idempotency/release').send(released)).status).toBe(204);
      expect((await claim(released)).body.outcome).toBe('claimed');

      const leased = ref('usr_c', 'k-3');
      await claim(leased, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await claim(leased)).body.outcome).toBe('claimed');
    });

    it('refuses to complete a claim it does not hold, and malformed calls', async () => {
      const lost = await call('post', '/idempotency/complete').send({
        ...ref('usr_d', 'never-claimed'),
        response: { ...response, encoding: 'utf8' },
      });
      expect(lost.status).toBe(409);
      const bad = await claim({ accountId: 'usr_d', key: 'has space', requestHash: hash('x') });
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toBe('key');
    });
  });
});
