import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  putModel,
  settledRequest,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { TEST_DASHBOARD, operatorOf, ownerOf, type Browser } from '../testing/dashboard.suite.js';
import { startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * The dashboard's usage API through edge: the session's account's usage and request
 * log (JSON pages and CSV), the operators' view across accounts, and that an owner never sees
 * another account's requests whatever the URL says. Usage records come from real admissions and
 * settlements in billing.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenantA: FundedAccount;
let tenantB: FundedAccount;
let ownerA: Browser;
let ownerB: Browser;

/** One request of `tenant` on `model`, admitted and settled as edge and the worker do. */
const request = (tenant: FundedAccount, holdId: string, model: string) =>
  settledRequest(billing, tenant, model, holdId);

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { dashboard: TEST_DASHBOARD });
  tenantA = await fundAccount(billing.operator);
  tenantB = await fundAccount(billing.operator);
  await putModel(billing, 'acme/one');
  await putModel(billing, 'acme/two');
  await request(tenantA, 'job-a1', 'acme/one');
  await request(tenantA, 'job-a2', 'acme/one');
  await request(tenantA, 'job-a3', 'acme/two');
  await request(tenantB, 'job-b1', 'acme/two');
  ownerA = await ownerOf(edge, tenantA, 'usage.a@example.com');
  ownerB = await ownerOf(edge, tenantB, 'usage.b@example.com');
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

const today = () => new Date().toISOString().slice(0, 10);

describe('owner: usage', () => {
  it('sums the own account by day and model, and per key', async () => {
    const daily = await ownerA.send('get', '/usage?group_by=day,model');
    expect(daily.status).toBe(200);
    expect(daily.body).toEqual({
      object: 'list',
      data: [
        expect.objectContaining({ day: today(), model: 'acme/one', requests: 2 }),
        expect.objectContaining({ day: today(), model: 'acme/two', requests: 1 }),
      ],
    });
    expect(daily.body.data[0].account_id).toBeUndefined();
    const byKey = await ownerA.send('get', `/usage?group_by=key&account=${tenantB.accountId}`);
    expect(byKey.body.data).toEqual([
      expect.objectContaining({ key: 'auto', scoped_token_id: null, requests: 3 }),
    ]);
    const bad = await ownerA.send('get', '/usage?group_by=week');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('group_by');
  });

  it('pages the own request log and exports it as CSV, never another account', async () => {
    const first = await ownerA.send('get', `/usage/requests?limit=2&account=${tenantB.accountId}`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((r: { job_id: string }) => r.job_id)).toEqual(['job-a3', 'job-a2']);
    expect(first.body.data[0]).toMatchObject({
      endpoint: 'chat.completions',
      model: 'acme/two',
      key: 'auto',
      prompt_tokens: 100,
      completion_tokens: 20,
      status: 'succeeded',
      generation_latency_ms: 50,
    });
    const second = await ownerA.send(
      'get',
      `/usage/requests?limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(second.body).toMatchObject({ next_cursor: null, data: [{ job_id: 'job-a1' }] });

    const csv = await ownerA.send('get', `/usage/requests?format=csv&account=${tenantB.accountId}`);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toContain('attachment');
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toMatch(/^ended_at,created_at,account_id,request_id,job_id,/);
    expect(lines.slice(1).map((line) => line.split(',')[4])).toEqual([
      'job-a3',
      'job-a2',
      'job-a1',
    ]);
    expect(csv.text).not.toContain('job-b1');

    const ofB = await ownerB.send('get', '/usage/requests');
    expect(ofB.body.data.map((r: { job_id: string }) => r.job_id)).toEqual(['job-b1']);
  });

  it('is for owners: operators have their own view', async () => {
    const ops = await operatorOf(edge, 'usage.ops@example.com', 'operator');
    expect((await ops.send('get', '/usage')).status).toBe(403);
    expect((await ownerA.send('get', '/operator/usage')).status).toBe(403);
  });
});

describe('operators: usage', () => {
  it('sums and logs across accounts or for one, JSON and CSV; finance reads too', async () => {
    const finance = await operatorOf(edge, 'usage.finance@example.com', 'finance');
    const all = await finance.send('get', '/operator/usage?group_by=model');
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ account_id: tenantA.accountId, model: 'acme/one', requests: 2 }),
        expect.objectContaining({ account_id: tenantB.accountId, model: 'acme/two', requests: 1 }),
      ]),
    );
    const ofB = await finance.send('get', `/operator/usage/requests?account=${tenantB.accountId}`);
    expect(ofB.body.data).toEqual([
      expect.objectContaining({ account_id: tenantB.accountId, job_id: 'job-b1' }),
    ]);
    const csv = await finance.send('get', '/operator/usage/requests?format=csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.text).toContain('job-a1');
    expect(csv.text).toContain('job-b1');
    const unknown = await finance.send('get', '/operator/usage?account=acct_nobody');
    expect(unknown.status).toBe(404);
  });
});
