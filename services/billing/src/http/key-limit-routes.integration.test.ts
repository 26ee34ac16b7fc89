import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KeyRateLimitView } from '@gateway/contracts';
import { startBillingApi, type BillingApiUnderTest } from './billing-api.suite.js';

/*
 * The list of an account's key and token rate limits in the operator API
 * (`GET /internal/v1/admin/accounts/{id}/rate-limits`, edge's `/admin/v1/...`)
 * over a real database: only the keys and registered tokens with a limit of their own, keys by
 * name then tokens, never another account's.
 */

let billing: BillingApiUnderTest;

beforeAll(async () => {
  billing = await startBillingApi();
});

afterAll(async () => {
  await billing?.close();
});

async function accountWithKeys(name: string, keys: string[]): Promise<string> {
  const account = await billing.call('post', '/admin/accounts').send({ name });
  const id = account.body.id as string;
  for (const key of keys) {
    const created = await billing
      .call('post', `/admin/accounts/${id}/api-keys`)
      .send({ name: key });
    expect(created.status).toBe(201);
  }
  return id;
}

/** A scoped token issued by `keyName`, registered (issued tokens are), and its id. */
async function issuedTokenId(accountId: string, keyName: string): Promise<string> {
  const created = await billing
    .call('post', `/accounts/${accountId}/scoped-tokens`)
    .send({ api_key_name: keyName, expires_delta: 3600 });
  expect(created.status).toBe(201);
  const info = await billing
    .call('post', '/key')
    .send({ authorization: `Bearer ${created.body.token as string}` });
  return info.body.scoped_token_id as string;
}

const put = (accountId: string, owner: string, body: object) =>
  billing.call('put', `/admin/accounts/${accountId}/${owner}/rate-limit`).send(body);

const view = (
  applies_to: KeyRateLimitView['applies_to'],
  owner: string,
  requests_per_minute: number | null,
  tokens_per_minute: number | null,
): KeyRateLimitView => ({
  object: 'rate_limit',
  applies_to,
  owner,
  requests_per_minute,
  tokens_per_minute,
});

describe('GET /admin/accounts/{id}/rate-limits', () => {
  it('lists only the keys and tokens with a limit of their own, keys first, by name', async () => {
    const accountId = await accountWithKeys('Limited', ['zeta', 'alpha', 'unlimited']);
    const other = await accountWithKeys('Other', ['alpha']);
    const tokenId = await issuedTokenId(accountId, 'unlimited');
    await issuedTokenId(accountId, 'zeta');

    const path = `/admin/accounts/${accountId}/rate-limits`;
    expect((await billing.call('get', path)).body).toEqual({ object: 'list', data: [] });

    expect((await put(accountId, 'api-keys/zeta', { requests_per_minute: 5 })).status).toBe(200);
    expect((await put(accountId, 'api-keys/alpha', { tokens_per_minute: 9000 })).status).toBe(200);
    expect(
      (await put(accountId, `scoped-tokens/${tokenId}`, { requests_per_minute: 2 })).status,
    ).toBe(200);
    expect((await put(other, 'api-keys/alpha', { requests_per_minute: 1 })).status).toBe(200);

    const listed = await billing.call('get', path);
    expect([listed.status, listed.body]).toEqual([
      200,
      {
        object: 'list',
        data: [
          view('api_key', 'alpha', null, 9000),
          view('api_key', 'zeta', 5, null),
          view('scoped_token', tokenId, 2, null),
        ],
      },
    ]);

    // Removed (or both set to none): no longer listed.
    expect(
      (await billing.call('delete', `/admin/accounts/${accountId}/api-keys/zeta/rate-limit`))
        .status,
    ).toBe(204);
    expect((await put(accountId, 'api-keys/alpha', { tokens_per_minute: null })).status).toBe(200);
    expect((await billing.call('get', path)).body.data).toEqual([
      view('scoped_token', tokenId, 2, null),
    ]);
    expect((await billing.call('get', `/admin/accounts/${other}/rate-limits`)).body.data).toEqual([
      view('api_key', 'alpha', 1, null),
    ]);
  });

  it('answers 404 for an unknown account and refuses the worker', async () => {
    const unknown = await billing.call('get', '/admin/accounts/acc_nobody/rate-limits');
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'resource_not_found']);
    const accountId = await accountWithKeys('Refused', ['main']);
    const worker = await billing.call('get', `/admin/accounts/${accountId}/rate-limits`, 'worker');
    expect([worker.status, worker.body.error.code]).toEqual([403, 'forbidden']);
  });
});
