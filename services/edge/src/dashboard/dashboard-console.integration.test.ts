import { createHmac } from 'node:crypto';
import { startDashboardStack, type DashboardStack } from '../testing/dashboard-stack.suite.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { completedEvent, type Harness } from '../../../dispatcher/src/testing/harness.suite.js';
import { type Receiver } from '../../../dispatcher/src/testing/receiver.suite.js';
import {
  putModel,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  operatorOf,
  ownerOf,
  type Browser,
  type DashboardMethod,
} from '../testing/dashboard.suite.js';
import { bearer, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * The dashboard's part 2 through edge: scoped tokens, webhooks, statements and the operators'
 * console, against the real billing and the real dispatcher (in process, its own database, its
 * internal API on a loopback port) delivering to an HTTPS receiver.
 */

let stack: DashboardStack;
let billing: BillingUnderTest;
let receiver: Receiver;
let dispatcher: Harness;
let edge: EdgeUnderTest;
let tenantA: FundedAccount;
let tenantB: FundedAccount;
let ownerA: Browser;
let ownerB: Browser;

beforeAll(async () => {
  stack = await startDashboardStack();
  ({ billing, dispatcher, receiver, edge } = stack);
  tenantA = await fundAccount(billing.operator, { creditDzd: 10 });
  tenantB = await fundAccount(billing.operator, { creditDzd: 10 });
  await putModel(billing, 'acme/chat');
  ownerA = await ownerOf(edge, tenantA, 'console.a@example.com');
  ownerB = await ownerOf(edge, tenantB, 'console.b@example.com');
});

afterAll(async () => {
  await stack?.close();
});

const models = (credential: string) => edge.api.get('/v1/models').set(bearer(credential));

/** Runs the dispatch once and waits for its attempts (the loop is not started here). */
const dispatchOnce = () => stack.dispatchOnce();

function expectCsrfRefused(response: { status: number; body: { error: { code: string } } }) {
  expect(response.status).toBe(403);
  expect(response.body.error.code).toBe('csrf_failed');
}

describe('owner: scoped tokens', () => {
  it('creates (shown once), lists with spend and state, pages, and revokes at once', async () => {
    const created = await ownerA
      .send('post', '/scoped-tokens')
      .send({ api_key_name: 'auto', models: ['acme/chat'], spending_limit: 1 });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect(token).toMatch(/^jwt:/);
    for (let i = 0; i < 2; i++) {
      expect(
        (await ownerA.send('post', '/scoped-tokens').send({ api_key_name: 'auto' })).status,
      ).toBe(201);
    }
    expect((await models(token)).status).toBe(200);

    const first = await ownerA.send('get', '/scoped-tokens?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await ownerA.send(
      'get',
      `/scoped-tokens?limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(second.body).toMatchObject({ object: 'list', next_cursor: null });
    const row = second.body.data[0];
    expect(row).toEqual({
      id: expect.stringMatching(/^tok_/),
      api_key_name: 'auto',
      origin: 'issued',
      models: ['acme/chat'],
      created_at: expect.any(String),
      expires_at: expect.any(String),
      revoked_at: null,
      spending_limit_dzd: 1,
      spent_dzd: 0,
      remaining_dzd: 1,
      state: 'valid',
    });
    expect(JSON.stringify(first.body) + JSON.stringify(second.body)).not.toContain(token);

    expectCsrfRefused(
      await ownerA.send('post', `/scoped-tokens/${row.id}/revoke`, { csrf: false }),
    );
    expectCsrfRefused(
      await ownerA.send('post', '/scoped-tokens', { csrf: false }).send({ api_key_name: 'auto' }),
    );
    const revoked = await ownerA.send('post', `/scoped-tokens/${row.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: row.id, state: 'revoked' });
    const refused = await models(token);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('token_revoked');
  });

  it("keeps each owner to their own account's tokens whatever the URL or body says", async () => {
    const created = await ownerA.send('post', '/scoped-tokens').send({ api_key_name: 'auto' });
    const token = created.body.token as string;
    const listA = (await ownerA.send('get', '/scoped-tokens?limit=100')).body.data as {
      id: string;
    }[];
    const idOfA = listA[0]!.id;

    const listB = (await ownerB.send('get', '/scoped-tokens?limit=100')).body.data as {
      id: string;
    }[];
    expect(listB.map((t) => t.id)).not.toContain(idOfA);
    const stolen = await ownerB.send('post', `/scoped-tokens/${idOfA}/revoke`);
    expect(stolen.status).toBe(404);
    expect((await models(token)).status).toBe(200);
    const foreignCursor = await ownerB.send('get', `/scoped-tokens?cursor=${idOfA}`);
    expect(foreignCursor.status).toBe(400);
    const smuggled = await ownerB
      .send('post', '/scoped-tokens')
      .send({ api_key_name: 'auto', account_id: tenantA.accountId });
    expect(smuggled.status).toBe(400);
  });
});

describe('owner: webhooks', () => {
  it('lists secrets without values, reveals on POST, rotates with the window end; two signatures follow', async () => {
    const listed = await ownerA.send('get', '/webhooks/secrets');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      { id: expect.stringMatching(/^whs_/), created_at: expect.any(String), expires_at: null },
    ]);
    expectCsrfRefused(await ownerA.send('post', '/webhooks/secrets/reveal', { csrf: false }));
    const revealed = await ownerA.send('post', '/webhooks/secrets/reveal');
    const before = revealed.body.data[0].secret as string;
    expect(before).toMatch(/^whsec_/);
    expect(JSON.stringify(listed.body)).not.toContain(before);

    expectCsrfRefused(await ownerA.send('post', '/webhooks/secrets/rotate', { csrf: false }));
    const rotated = await ownerA.send('post', '/webhooks/secrets/rotate');
    expect(rotated.status).toBe(201);
    expect(rotated.body).toEqual({
      secret: {
        id: expect.stringMatching(/^whs_/),
        secret: expect.stringMatching(/^whsec_/),
        created_at: expect.any(String),
        expires_at: null,
      },
      previous_expires_at: expect.any(String),
    });
    expect(Date.parse(rotated.body.previous_expires_at)).toBeGreaterThan(Date.now());
    const after = await ownerA.send('get', '/webhooks/secrets');
    expect(after.body.data).toContainEqual(
      expect.objectContaining({ expires_at: rotated.body.previous_expires_at }),
    );

    const event = completedEvent(receiver.url('/a'), { accountId: tenantA.accountId });
    await dispatcher.dispatcher.intake.accept(event);
    await dispatchOnce();
    const [delivered] = receiver.requestsTo('/a');
    expect(String(delivered!.headers['webhook-signature']).split(' ')).toHaveLength(2);

    const revealedB = await ownerB.send('post', '/webhooks/secrets/reveal');
    const secretsOfB = revealedB.body.data.map((s: { secret: string }) => s.secret);
    expect(secretsOfB).not.toContain(before);
    expect(secretsOfB).not.toContain(rotated.body.secret.secret);
  });

  it('expires the previous secret now: the next delivery carries the current signature only', async () => {
    const listed = await ownerA.send('get', '/webhooks/secrets');
    expect(listed.body.data).toHaveLength(2);
    const current = listed.body.data.find((s: { expires_at: string | null }) => !s.expires_at);
    expectCsrfRefused(
      await ownerA.send('post', '/webhooks/secrets/expire-previous', { csrf: false }),
    );
    const expired = await ownerA.send('post', '/webhooks/secrets/expire-previous');
    expect(expired.status).toBe(200);
    expect(expired.body).toEqual({ object: 'list', data: [current], expired: 1 });
    expect((await ownerA.send('get', '/webhooks/secrets')).body.data).toEqual([current]);
    const revealed = await ownerA.send('post', '/webhooks/secrets/reveal');
    const [secret] = revealed.body.data.map((s: { secret: string }) => s.secret);

    const event = completedEvent(receiver.url('/expired'), { accountId: tenantA.accountId });
    await dispatcher.dispatcher.intake.accept(event);
    await dispatchOnce();
    const [delivered] = receiver.requestsTo('/expired');
    const header = String(delivered!.headers['x-service-signature']);
    const parts = header.split(',');
    expect(parts.filter((part) => part.startsWith('v1='))).toHaveLength(1);
    const t = parts[0]!.slice('t='.length);
    const expected = createHmac('sha256', secret).update(`${t}.`).update(delivered!.body);
    expect(parts[1]).toBe(`v1=${expected.digest('hex')}`);
    expect(String(delivered!.headers['webhook-signature']).split(' ')).toHaveLength(1);

    // Nothing left to expire: the same answer, `expired: 0`.
    const again = await ownerA.send('post', '/webhooks/secrets/expire-previous');
    expect(again.body).toEqual({ object: 'list', data: [current], expired: 0 });
    // Only the own account's secrets: B still has its one, untouched.
    expect((await ownerB.send('get', '/webhooks/secrets')).body.data).toHaveLength(1);
  });

  it('limits rotations per account: past the limit 429 rate_limit_exceeded with Retry-After', async () => {
    const limit = dispatcher.config.SECRET_ROTATIONS_PER_HOUR;
    for (let i = 0; i < limit; i++) {
      expect((await ownerB.send('post', '/webhooks/secrets/rotate')).status).toBe(201);
    }
    const before = (await ownerB.send('get', '/webhooks/secrets')).body.data;
    expect(before).toHaveLength(2);
    const refused = await ownerB.send('post', '/webhooks/secrets/rotate');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        message: expect.stringContaining('rotations per hour'),
        type: 'service_error',
        code: 'rate_limit_exceeded',
      },
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3_000);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect((await ownerB.send('get', '/webhooks/secrets')).body.data).toEqual(before);
  });

  it('reads and changes the webhook format of the own account only', async () => {
    expect((await ownerA.send('get', '/webhooks/settings')).body).toEqual({ webhook_format: 'A' });
    expectCsrfRefused(
      await ownerA.send('put', '/webhooks/settings', { csrf: false }).send({ webhook_format: 'B' }),
    );
    const smuggled = await ownerA
      .send('put', '/webhooks/settings')
      .send({ webhook_format: 'B', account_id: tenantB.accountId });
    expect(smuggled.status).toBe(400);
    const changed = await ownerA.send('put', '/webhooks/settings').send({ webhook_format: 'B' });
    expect(changed.body).toEqual({ webhook_format: 'B' });
    expect((await ownerA.send('get', '/webhooks/settings')).body.webhook_format).toBe('B');
    expect((await ownerB.send('get', '/webhooks/settings')).body.webhook_format).toBe('A');
    await ownerA.send('put', '/webhooks/settings').send({ webhook_format: 'A' });
  });

  it('lists deliveries and redelivers the own ones only', async () => {
    receiver.setResponder('/down', () => ({ status: 503 }));
    const event = completedEvent(receiver.url('/log'), { accountId: tenantA.accountId });
    const { deliveryId } = await dispatcher.dispatcher.intake.accept(event);
    await dispatchOnce();

    const log = await ownerA.send('get', '/webhooks/deliveries?limit=1');
    expect(log.status).toBe(200);
    expect(log.body).toEqual({
      object: 'list',
      data: [
        {
          id: deliveryId,
          job_id: event.jobId,
          event_type: 'inference.completed',
          status: 'delivered',
          attempts: 1,
          last_response_code: 204,
          next_attempt_at: null,
          created_at: expect.any(String),
        },
      ],
      next_cursor: expect.any(String),
    });
    expect((await ownerB.send('get', '/webhooks/deliveries')).body.data).toEqual([]);

    const stolen = await ownerB.send('post', `/webhooks/deliveries/${deliveryId}/redeliver`);
    expect(stolen.status).toBe(404);
    expectCsrfRefused(
      await ownerA.send('post', `/webhooks/deliveries/${deliveryId}/redeliver`, { csrf: false }),
    );
    const again = await ownerA.send('post', `/webhooks/deliveries/${deliveryId}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: deliveryId, status: 'queued' });
    await dispatchOnce();
    expect(receiver.requestsTo('/log')).toHaveLength(2);
  });
});

describe('owner: statement', () => {
  it('answers the own statement as JSON and CSV, never another account', async () => {
    const json = await ownerA.send('get', `/statement?account=${tenantB.accountId}`);
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ account_id: tenantA.accountId });
    expect(json.body.lines).toEqual([
      expect.objectContaining({ kind: 'credit', amount_micro_dzd: '10000000' }),
    ]);
    const csv = await ownerA.send('get', '/statement?format=csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toContain('attachment');
    expect(csv.text).toContain('credit');
    const ranged = await ownerA.send(
      'get',
      '/statement?from=2001-01-01T00:00:00Z&to=2001-02-01T00:00:00Z',
    );
    expect(ranged.body.lines).toEqual([]);
    const bad = await ownerA.send('get', '/statement?from=yesterday');
    expect(bad.status).toBe(400);
  });
});

describe('operators: console', () => {
  let ops: Browser;
  let finance: Browser;

  beforeAll(async () => {
    ops = await operatorOf(edge, 'console.ops@example.com', 'operator');
    finance = await operatorOf(edge, 'console.finance@example.com', 'finance');
  });

  it('reads the catalog, the ledger, the check, statements and deliveries', async () => {
    for (const browser of [ops, finance]) {
      const catalog = await browser.send('get', '/operator/models');
      expect(catalog.body.data).toContainEqual(expect.objectContaining({ id: 'acme/chat' }));
      const entries = await browser.send('get', '/operator/ledger/entries?limit=1');
      expect(entries.body).toMatchObject({ object: 'list', next_cursor: expect.any(String) });
      expect(entries.body.data).toHaveLength(1);
      const next = await browser.send(
        'get',
        `/operator/ledger/entries?limit=1&cursor=${entries.body.next_cursor}`,
      );
      expect(next.body.data[0].id).not.toBe(entries.body.data[0].id);
      const ofA = await browser.send(
        'get',
        `/operator/ledger/entries?account=${tenantA.accountId}`,
      );
      expect(ofA.body.data).toEqual([
        expect.objectContaining({ account_id: tenantA.accountId, amount_micro_dzd: '10000000' }),
      ]);
      const check = await browser.send('get', '/operator/ledger/check');
      expect(check.body).toEqual({ ok: true, violations: [] });
      const statement = await browser.send(
        'get',
        `/operator/accounts/${tenantB.accountId}/statement`,
      );
      expect(statement.body).toMatchObject({ account_id: tenantB.accountId });
      const csv = await browser
        .send('get', `/operator/accounts/${tenantB.accountId}/statement`)
        .set('Accept', 'text/csv');
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      const deliveries = await browser.send(
        'get',
        `/operator/accounts/${tenantA.accountId}/webhook-deliveries`,
      );
      expect(deliveries.body.data.length).toBeGreaterThan(0);
    }
    const unknown = await ops.send('get', '/operator/accounts/usr_nobody/webhook-deliveries');
    expect(unknown.status).toBe(404);
    for (const path of ['/operator/models', '/operator/ledger/check']) {
      expect((await ownerA.send('get', path)).status).toBe(403);
    }
  });

  it('lets role operator change the catalog, suspension and rate limit; finance gets 403', async () => {
    const model = {
      kind: 'chat',
      provider: 'node',
      upstream_model: 'm',
      max_output_tokens: 64,
      input_price_dzd_per_m: 1,
      output_price_dzd_per_m: 2,
    };
    const writes: [DashboardMethod, string, object?][] = [
      ['put', '/operator/models/acme/new-1', model],
      ['post', `/operator/accounts/${tenantB.accountId}/suspend`],
      ['post', `/operator/accounts/${tenantB.accountId}/unsuspend`],
      ['patch', `/operator/accounts/${tenantB.accountId}`, { rate_limit_per_minute: 7 }],
    ];
    for (const [method, path, body] of writes) {
      const refused = await finance.send(method, path).send(body ?? {});
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
      expectCsrfRefused(await ops.send(method, path, { csrf: false }).send(body ?? {}));
    }
    expect((await ops.send('get', '/operator/models')).body.data).not.toContainEqual(
      expect.objectContaining({ id: 'acme/new-1' }),
    );

    const put = await ops.send('put', '/operator/models/acme/new-1').send(model);
    expect(put.status).toBe(200);
    expect((await ops.send('get', '/operator/models')).body.data).toContainEqual(
      expect.objectContaining({ id: 'acme/new-1' }),
    );
    const suspended = await ops.send('post', `/operator/accounts/${tenantB.accountId}/suspend`);
    expect(suspended.body).toMatchObject({ id: tenantB.accountId, status: 'suspended' });
    expect((await models(tenantB.apiKey)).status).toBe(403);
    const lifted = await ops.send('post', `/operator/accounts/${tenantB.accountId}/unsuspend`);
    expect(lifted.body.status).toBe('active');
    expect((await models(tenantB.apiKey)).status).toBe(200);
    const limited = await ops
      .send('patch', `/operator/accounts/${tenantB.accountId}`)
      .send({ rate_limit_per_minute: 7 });
    expect(limited.body).toMatchObject({ rate_limit_per_minute: 7 });
    const smuggled = await ops
      .send('patch', `/operator/accounts/${tenantB.accountId}`)
      .send({ rate_limit_per_minute: 7, webhook_format: 'B' });
    expect(smuggled.status).toBe(400);
  });
});
