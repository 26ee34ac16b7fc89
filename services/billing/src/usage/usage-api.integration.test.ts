import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { fundAccount } from '@gateway/testing';
import {
  putChatModel,
  startBillingApi,
  type BillingApiUnderTest,
} from '../http/billing-api.suite.js';

/*
 * Usage records over billing's internal API: admission keeps the request's context for its usage
 * record, settle and void take the record's optional fields (validated by the contract), and
 * only edge reads usage.
 */

let billing: BillingApiUnderTest;
let key: string;
let accountId: string;

beforeAll(async () => {
  billing = await startBillingApi();
  ({ accountId, apiKey: key } = await fundAccount(billing.operator, {
    name: 'Usage',
    keyName: 'ci',
    credit: { idempotencyKey: 'usage-topup', reference: 'test' },
  }));
  await putChatModel(billing, {
    id: 'acme/usage-1',
    inputPriceDzdPerM: 100,
    outputPriceDzdPerM: 300,
    maxOutputTokens: 1000,
  });
});

afterAll(async () => {
  await billing?.close();
});

const admit = async (holdId: string) => {
  const answer = await billing.call('post', '/admissions').send({
    authorization: `Bearer ${key}`,
    holdId,
    model: 'acme/usage-1',
    estimate: { inputTokens: 100, maxOutputTokens: 50, choices: 1 },
    priority: false,
    endpoint: 'native',
    requestId: `req_${holdId}`,
  });
  expect(answer.status).toBe(200);
};

const log = async () => {
  const answer = await billing.call('get', `/accounts/${accountId}/usage/requests`);
  expect(answer.status).toBe(200);
  return answer.body.data as Record<string, unknown>[];
};

it('a settled request: context from admission, fields from the worker', async () => {
  await admit('job-usage-1');
  const settled = await billing.call('post', '/holds/job-usage-1/settle', 'worker').send({
    inputTokens: 100,
    outputTokens: 20,
    reasoningTokens: 5,
    startedAtMs: Date.now(),
    generationMs: 321,
  });
  expect(settled.status).toBe(200);
  expect((await log())[0]).toMatchObject({
    job_id: 'job-usage-1',
    request_id: 'req_job-usage-1',
    endpoint: 'native',
    key: 'ci',
    scoped_token_id: null,
    model: 'acme/usage-1',
    prompt_tokens: 100,
    completion_tokens: 20,
    reasoning_tokens: 5,
    cost_dzd: Number(settled.body.costMicroDzd) / 1e6,
    status: 'succeeded',
    generation_latency_ms: 321,
  });
});

it('a void says why; a bad outcome or an unknown field is refused', async () => {
  await admit('job-usage-2');
  const bad = await billing.call('post', '/holds/job-usage-2/void').send({ outcome: 'lost' });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ code: 'invalid_request_body' });
  const unknown = await billing.call('post', '/holds/job-usage-2/void').send({ prompt: 'x' });
  expect(unknown.status).toBe(400);
  const voided = await billing.call('post', '/holds/job-usage-2/void').send({ outcome: 'refused' });
  expect(voided.status).toBe(200);
  expect((await log())[0]).toMatchObject({ job_id: 'job-usage-2', status: 'refused', cost_dzd: 0 });
});

it('a void with no body (older callers) still works: failed', async () => {
  await admit('job-usage-3');
  expect((await billing.call('post', '/holds/job-usage-3/void')).status).toBe(200);
  expect((await log())[0]).toMatchObject({ job_id: 'job-usage-3', status: 'failed' });
});

it('only edge reads usage', async () => {
  const byWorker = await billing.call('get', `/accounts/${accountId}/usage`, 'worker');
  expect(byWorker.status).toBe(403);
  const sums = await billing.call('get', `/accounts/${accountId}/usage?group_by=model`);
  expect(sums.body.data).toEqual([
    expect.objectContaining({ model: 'acme/usage-1', requests: 3, prompt_tokens: 100 }),
  ]);
  const admin = await billing.call('get', `/admin/usage?group_by=key&account=${accountId}`);
  expect(admin.body.data).toEqual([
    expect.objectContaining({ account_id: accountId, key: 'ci', requests: 3 }),
  ]);
});

it('operators: a malformed ?account= is a 400 before any lookup, an unknown one a 404', async () => {
  for (const path of ['/admin/usage', '/admin/usage/requests']) {
    const nul = await billing.call('get', `${path}?account=%00`);
    expect([path, nul.status, nul.body.error?.code]).toEqual([path, 400, 'invalid_request_body']);
    const unknown = await billing.call('get', `${path}?account=acct_unknown`);
    expect([path, unknown.status]).toEqual([path, 404]);
  }
});

// Last: it adds a request to the account whose sums the tests above count.
it('marks a Responses API request whose content is stored, until it is deleted', async () => {
  const responseId = `resp_${'ab'.repeat(16)}`;
  await admit(responseId);
  const settled = await billing.call('post', `/holds/${responseId}/settle`, 'worker').send({
    inputTokens: 10,
    outputTokens: 2,
  });
  expect(settled.status).toBe(200);
  const entry = async () => (await log()).find((row) => row.job_id === responseId);
  expect(await entry()).toMatchObject({ stored: false });
  const path = `/accounts/${accountId}/responses/${responseId}`;
  const saved = await billing.call('put', path).send({
    tokenDigest: null,
    previousResponseId: null,
    inputItems: [{ id: 'msg_stored_1', type: 'message', role: 'user', content: [] }],
    response: { id: responseId, object: 'response', output: [] },
  });
  expect(saved.status).toBe(204);
  expect(await entry()).toMatchObject({ stored: true });
  expect((await log()).filter((row) => row.stored)).toHaveLength(1);
  expect((await billing.call('delete', path)).status).toBe(200);
  expect(await entry()).toMatchObject({ stored: false });
});
