import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fundAccount, freeLoopbackPort, type FundedAccount } from '@gateway/testing';
import {
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { bearer, startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { chatCompletion, startFakeWorker, type FakeWorker } from '../testing/fake-worker.suite.js';

/*
 * Edge admits API keys in billing's database itself (ADR 0070): no call to billing's admission
 * route for them, scoped tokens and anything else still through it, and the database out of
 * reach answered as billing out of reach is, with no hold left behind.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let worker: FakeWorker;
let tenant: FundedAccount;
const ADMISSION_ROUTES = ['/internal/v1/admissions', '/internal/v1/admissions/batch'];
const admissionCalls = () => billing.paths.filter((path) => ADMISSION_ROUTES.includes(path));
const chat = (api: EdgeUnderTest['api'], credential: string) =>
  api
    .post('/v1/chat/completions')
    .set(bearer(credential))
    .send({ model: 'acme/chat', messages: [{ role: 'user', content: 'Hi' }] });

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { replyTimeoutMs: 3_000 });
  worker = await startFakeWorker(edge.bus, edge.names, billing, (job) => [
    { type: 'final', data: chatCompletion(job) },
  ]);
  await putModel(billing, 'acme/chat', { inputPrice: 1_000, outputPrice: 2_000 });
  tenant = await fundAccount(billing.operator);
});

afterAll(async () => {
  await worker?.stop();
  await edge?.close();
  await billing?.close();
});

describe("edge's own admission of API keys", () => {
  it("admits an API key without billing's admission route, a scoped token through it", async () => {
    const before = admissionCalls().length;
    const answered = await chat(edge.api, tenant.apiKey);
    expect(answered.status).toBe(200);
    expect(answered.body._service).toMatchObject({ cost_dzd: 0.02, balance_dzd: 9.98 });
    expect(admissionCalls()).toHaveLength(before);

    const refused = await chat(edge.api, 'jwt:not.a.token');
    expect(refused.status).toBe(401);
    expect(admissionCalls().length).toBeGreaterThan(before);
  });

  it('answers 503 with Retry-After when the database is out of reach, and holds nothing', async () => {
    const closed = await freeLoopbackPort();
    const cutOff = await startEdge(
      { ...billing, admissionUrl: `postgres://edge_admission:x@127.0.0.1:${closed}/billing` },
      { prefix: edge.prefix },
    );
    try {
      const account = await fundAccount(billing.operator);
      const response = await chat(cutOff.api, account.apiKey);
      expect(response.status).toBe(503);
      expect(response.body.error).toMatchObject({ code: 'service_unavailable' });
      expect(response.headers['retry-after']).toBe('1');
      expect(await billing.holdsOf(account.accountId)).toEqual([]);
    } finally {
      await cutOff.close();
    }
  });
});
