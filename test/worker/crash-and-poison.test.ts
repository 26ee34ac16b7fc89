import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeEnvelope } from '@gateway/contracts';
import { deadQueueName, gatewayNames } from '@gateway/messaging';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import { spawnService, testAmqpUrl, uniquePrefix, type ServiceProcess } from '@gateway/testing';
import {
  admitHold,
  fundedAccount,
  startBilling,
  type BillingHarness,
  type FundedAccount,
} from '../support/billing-harness.js';
import { JobClient, startWorker, waitFor } from '../support/worker-harness.js';
import { chatModel, contentOf, expectedCost, PRICES } from './worker-fixture.suite.js';

const workerEntry = path.resolve('services', 'inference-worker', 'dist', 'main.js');
const messages = [{ role: 'user', content: 'Count the dunes.' }];

describe('worker: crashes and poison messages', () => {
  let billing: BillingHarness;
  let node: StandInModelNode;
  let account: FundedAccount;
  beforeAll(async () => {
    billing = await startBilling();
    node = await createStandInModelNode({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
    account = await fundedAccount(billing, 100);
    await billing.call('PUT', '/admin/models/acme/chat', { ...PRICES, ...chatModel([node.url]) });
  });
  afterAll(async () => {
    await node.close();
    await billing.close();
  });

  const chatJob = async (client: JobClient) => {
    const { holdId } = await admitHold(billing, account, 'acme/chat', { inputTokens: 50 });
    const jobId = await client.publish({
      accountId: account.accountId,
      holdId,
      model: 'acme/chat',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: { model: 'acme/chat', messages },
    });
    return { holdId, jobId };
  };

  it('completes a job after its worker process was killed with SIGKILL mid-job, charging it once', async () => {
    const prefix = uniquePrefix('crash');
    const client = await JobClient.start(prefix);
    const env = {
      AMQP_URL: testAmqpUrl(),
      AMQP_PREFIX: prefix,
      BILLING_URL: billing.url,
      BILLING_INTERNAL_TOKEN: billing.workerToken,
      CATALOG_CACHE_TTL_MS: '0',
    };
    let worker: ServiceProcess | undefined = await spawnService({ entry: workerEntry, env });
    try {
      node.setOptions({ firstTokenLatencyMs: 3_000 });
      const { holdId, jobId } = await chatJob(client);
      await waitFor(() => node.stats().outstanding > 0 || undefined, 10_000, 'the job at the node');
      await worker.stop('SIGKILL');
      node.setOptions({ firstTokenLatencyMs: 0 });
      expect((await billing.hold(holdId)).status).toBe('pending');
      worker = await spawnService({ entry: workerEntry, env });
      const { end } = await client.waitForEnd(jobId, 20_000);
      expect(end.type).toBe('final');
      expect(contentOf(end.data).length).toBeGreaterThan(0);
      const hold = await billing.hold(holdId);
      expect(hold).toMatchObject({ status: 'settled', settled: expectedCost(end.usage!) });
      // Exactly one final reply; billing's invariant check (afterAll) verifies one settlement.
      expect(client.repliesOf(jobId).filter((r) => r.type !== 'chunk')).toHaveLength(1);
    } finally {
      node.setOptions({ firstTokenLatencyMs: 0 });
      await worker?.stop('SIGKILL');
      await client.close();
    }
  }, 60_000);

  it('dead-letters an unreadable job at once', async () => {
    const prefix = uniquePrefix('poison');
    const client = await JobClient.start(prefix);
    const worker = await startWorker(billing, prefix);
    const names = gatewayNames(prefix);
    const dead: unknown[] = [];
    await client.bus.consume(
      deadQueueName(names.queues.inferenceJobs),
      async (d) => (dead.push(d.body), 'ack'),
      { prefetch: 10 },
    );
    try {
      await client.bus.publish(
        { exchange: names.exchanges.jobs, routingKey: 'default' },
        { v: 1, kind: 'inference.job', id: 'x', createdAtMs: 1, payload: { jobId: 'j' } },
      );
      await waitFor(() => dead.length > 0 || undefined, 10_000, 'the dead-lettered message');
      expect(dead[0]).toMatchObject({ kind: 'inference.job', payload: { jobId: 'j' } });
    } finally {
      await worker.stop();
      await client.close();
    }
  });

  it('dead-letters a job whose outcome keeps failing after the delivery limit, and voids its hold', async () => {
    const prefix = uniquePrefix('poison');
    const client = await JobClient.start(prefix);
    const worker = await startWorker(billing, prefix, { billingAttempts: 1 });
    const names = gatewayNames(prefix);
    const dead: { jobId?: string }[] = [];
    await client.bus.consume(
      deadQueueName(names.queues.inferenceJobs),
      async (d) => (dead.push((d.body as { payload: { jobId?: string } }).payload), 'ack'),
      { prefetch: 10 },
    );
    let settleCalls = 0;
    billing.fault.fails = (method, url) => {
      const settling = method === 'POST' && url.endsWith('/settle');
      if (settling) settleCalls += 1;
      return settling;
    };
    try {
      const { holdId, jobId } = await chatJob(client);
      await waitFor(() => dead.find((d) => d.jobId === jobId), 30_000, 'the dead-lettered job');
      // One settle attempt per delivery: the queue's delivery limit (5), then the dead queue.
      expect(settleCalls).toBe(5);
      expect((await billing.hold(holdId)).status).toBe('voided');
      const { end } = await client.waitForEnd(jobId);
      expect(end).toMatchObject({ type: 'error', error: { code: 'GATEWAY_TIMEOUT' } });
    } finally {
      billing.fault.fails = undefined;
      await worker.stop();
      await client.close();
    }
  }, 60_000);

  it('drops a job cancelled before a worker picked it up, voiding its hold without a model call', async () => {
    const prefix = uniquePrefix('cancel');
    const client = await JobClient.start(prefix);
    const worker = await startWorker(billing, prefix, { prefetch: { default: 1, priority: 1 } });
    try {
      node.setOptions({ firstTokenLatencyMs: 1_000 });
      const first = await chatJob(client);
      await waitFor(
        () => node.stats().outstanding > 0 || undefined,
        5_000,
        'the first job at the node',
      );
      const second = await chatJob(client);
      await client.cancel(second.jobId);
      const calls = node.stats().byPath['/v1/chat/completions'];
      node.setOptions({ firstTokenLatencyMs: 0 });
      await client.waitForEnd(first.jobId);
      const { end } = await client.waitForEnd(second.jobId);
      expect(end.type).toBe('error');
      expect((await billing.hold(second.holdId)).status).toBe('voided');
      expect(node.stats().byPath['/v1/chat/completions']).toBe(calls);
    } finally {
      node.setOptions({ firstTokenLatencyMs: 0 });
      await worker.stop();
      await client.close();
    }
  });

  it('keeps envelopes valid for the protocol (sanity of the test driver)', () => {
    expect(() => makeEnvelope('inference.cancel', { jobId: 'j', reason: 'timeout' })).not.toThrow();
  });
});
