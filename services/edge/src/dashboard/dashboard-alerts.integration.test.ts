import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { TEST_DASHBOARD, adminAuth, ownerOf, type Browser } from '../testing/dashboard.suite.js';
import { startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/*
 * Account alert settings through edge: the operator API
 * (`/admin/v1/accounts/{id}/alerts`) and the owner's dashboard API (`/dashboard/api/alerts`),
 * both validated by the contract before billing, the owner's always the session's account.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let tenantA: FundedAccount;
let tenantB: FundedAccount;
let ownerA: Browser;

const HOOK = 'https://hooks.example.com/alerts?token=abc';

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { dashboard: TEST_DASHBOARD });
  tenantA = await fundAccount(billing.operator, { creditDzd: 100 });
  tenantB = await fundAccount(billing.operator, { creditDzd: 100 });
  ownerA = await ownerOf(edge, tenantA, 'alerts.a@example.com');
});

afterAll(async () => {
  await edge?.close();
  await billing?.close();
});

describe('operator API: account alerts', () => {
  const path = () => `/admin/v1/accounts/${tenantB.accountId}/alerts`;

  it('sets, reads and removes an account’s alerts', async () => {
    expect((await edge.api.get(path()).set(adminAuth(edge))).status).toBe(404);
    const put = await edge.api
      .put(path())
      .set(adminAuth(edge))
      .send({ url: HOOK, balance_below_dzd: 12.5, exhaustion_hours: 48 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      object: 'alert_settings',
      account_id: tenantB.accountId,
      url: HOOK,
      balance_below_micro_dzd: '12500000',
      budget_thresholds_percent: [50, 80, 100],
      exhaustion_hours: 48,
    });
    expect((await edge.api.get(path()).set(adminAuth(edge))).body).toEqual(put.body);
    expect((await edge.api.delete(path()).set(adminAuth(edge))).status).toBe(204);
    expect((await edge.api.delete(path()).set(adminAuth(edge))).status).toBe(404);
  });

  it('refuses a bad body at edge, naming the field, and an unknown account', async () => {
    for (const [body, param] of [
      [{ url: 'ftp://x' }, 'url'],
      // Refused like a job's webhook: the dispatcher would drop every alert sent there.
      [{ url: 'http://hooks.example.com/alerts' }, 'url'],
      [{ url: 'https://user:pass@hooks.example.com/alerts' }, 'url'],
      // An address literal outside the public ranges, in any spelling (the metadata address).
      [{ url: 'https://2852039166/alerts' }, 'url'],
      [{ url: 'https://[::ffff:169.254.169.254]/alerts' }, 'url'],
      [{ url: HOOK, budget_thresholds_percent: [50, 50] }, 'budget_thresholds_percent'],
      [{ url: HOOK, budget_thresholds_percent: [0] }, 'budget_thresholds_percent[0]'],
      [{ url: HOOK, exhaustion_hours: 721 }, 'exhaustion_hours'],
      [{ url: HOOK, extra: true }, 'extra'],
    ] as const) {
      const answer = await edge.api.put(path()).set(adminAuth(edge)).send(body);
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_request_body']);
      expect(answer.body.error.param).toBe(param);
    }
    const unknown = await edge.api
      .put('/admin/v1/accounts/usr_nobody/alerts')
      .set(adminAuth(edge))
      .send({ url: HOOK });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'resource_not_found']);
  });
});

describe('owner: account alerts', () => {
  it('sets and reads the session’s account’s alerts only', async () => {
    expect((await ownerA.send('get', '/alerts')).status).toBe(404);
    const put = await ownerA.send('put', '/alerts').send({
      url: HOOK,
      balance_below_dzd: '3',
      budget_thresholds_percent: [90, 25],
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      account_id: tenantA.accountId,
      budget_thresholds_percent: [25, 90],
    });
    expect((await ownerA.send('get', '/alerts')).body).toEqual(put.body);
    const insecure = await ownerA
      .send('put', '/alerts')
      .send({ url: 'http://hooks.example.com/a' });
    expect([insecure.status, insecure.body.error.param]).toEqual([400, 'url']);
    for (const url of [
      'https://[fd00:ec2::254]/a',
      'https://100.64.0.1/a',
      'https://[fe80::1]/a',
    ]) {
      const internal = await ownerA.send('put', '/alerts').send({ url });
      expect([internal.status, internal.body.error.param]).toEqual([400, 'url']);
    }
    const refused = await ownerA.send('put', '/alerts', { csrf: false }).send({ url: HOOK });
    expect(refused.status).toBe(403);
    expect((await ownerA.send('delete', '/alerts')).status).toBe(204);
    expect((await ownerA.send('get', '/alerts')).status).toBe(404);
  });
});
