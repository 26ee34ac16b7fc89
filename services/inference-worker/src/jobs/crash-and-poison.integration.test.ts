import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeEnvelope, type InferenceJobPayload } from '@gateway/contracts';
import { deadQueueName, gatewayNames } from '@gateway/messaging';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import {
  fundAccount,
  spawnService,
  testAmqpUrl,
  uniquePrefix,
  waitFor,
  type FundedAccount,
  type ServiceProcess,
} from '@gateway/testing';
import {
  admitHold,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { JobClient, startWorker } from '../testing/worker-harness.suite.js';
import { chatModel, contentOf, expectedCost, PRICES } from '../testing/worker-fixture.suite.js';

const workerEntry = path.resolve('services', 'inference-worker', 'dist', 'main.js');
const messages = [{ role: 'user', content: 'Count the dunes.' }];

describe('worker: crashes and poison messages', () => {
  let billing: BillingUnderTest;
  let node: StandInModelNode;
  let account: FundedAccount;
  beforeAll(async () => {
    billing = await startBilling();
    node = await createStandInModelNode({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
    account = await fundAccount(billing.operator, { creditDzd: 100 });
    await billing.call('PUT', '/admin/models/acme/chat', { ...PRICES, ...chatModel([node.url]) });
  });
  afterAll(async () => {
    await node.close();
    await billing.close();
  });

  const chatJob = async (
    client: JobClient,
    job: Partial<InferenceJobPayload> = {},
    options: { async?: boolean } = {},
  ) => {
    const { holdId } = await admitHold(billing, account, 'acme/chat', { inputTokens: 50 });
    const jobId = await client.publish(
      {
        accountId: account.accountId,
        holdId,
        model: 'acme/chat',
        modelKind: 'chat',
        endpoint: 'chat.completions',
        request: { model: 'acme/chat', messages },
        ...job,
      },
      options,
    );
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

  const crashEnv = (prefix: string) => ({
    AMQP_URL: testAmqpUrl(),
    AMQP_PREFIX: prefix,
    BILLING_URL: billing.url,
    BILLING_INTERNAL_TOKEN: billing.workerToken,
    CATALOG_CACHE_TTL_MS: '0',
  });

  /** A real worker process the scenario can SIGKILL and restart; everything stopped after. */
  const withKillableWorker = async (
    scenario: (
      client: JobClient,
      restart: (meanwhile: () => Promise<void>) => Promise<void>,
    ) => Promise<void>,
  ) => {
    const prefix = uniquePrefix('crash');
    const client = await JobClient.start(prefix);
    const env = crashEnv(prefix);
    let worker: ServiceProcess | undefined = await spawnService({ entry: workerEntry, env });
    try {
      await scenario(client, async (meanwhile) => {
        await worker?.stop('SIGKILL');
        worker = undefined;
        await meanwhile();
        worker = await spawnService({ entry: workerEntry, env });
      });
    } finally {
      node.setOptions({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
      await worker?.stop('SIGKILL');
      await client.close();
    }
  };

  it('marks the replies of a run redelivered after a mid-stream kill as another attempt', async () => {
    await withKillableWorker(async (client, restart) => {
      node.setOptions({ tokensPerSecond: 5 });
      const { jobId } = await chatJob(client, {
        stream: true,
        request: { model: 'acme/chat', messages, stream: true, max_tokens: 12 },
      });
      await waitFor(() => client.repliesOf(jobId).length >= 3 || undefined, 10_000, 'chunks');
      await restart(async () => node.setOptions({ tokensPerSecond: 0 }));
      const { end } = await client.waitForEnd(jobId, 20_000);
      const attempts = [...new Set(client.repliesOf(jobId).map((reply) => reply.attemptId))];
      expect(attempts).toHaveLength(2);
      expect(attempts.every((id) => typeof id === 'string')).toBe(true);
      // Each attempt counts its replies from 0: edge orders and binds per attempt.
      const second = client.repliesOf(jobId).filter((reply) => reply.attemptId === attempts[1]);
      expect(second.map((reply) => reply.seq)).toEqual(second.map((_, index) => index));
      expect(end.attemptId).toBe(attempts[1]);
    });
  }, 60_000);

  it.each(['settled', 'voided'] as const)(
    'acknowledges a redelivered job whose hold was %s without calling a model again',
    async (finalStatus) => {
      await withKillableWorker(async (client, restart) => {
        node.setOptions({ firstTokenLatencyMs: 3_000 });
        const { holdId, jobId } = await chatJob(
          client,
          { webhookUrl: 'http://127.0.0.1:9/hook' },
          { async: true },
        );
        await waitFor(() => node.stats().outstanding > 0 || undefined, 10_000, 'the job at node');
        let calls: number | undefined;
        await restart(async () => {
          // What an earlier run finalised before it died (settled), or edge/the sweeper (voided).
          if (finalStatus === 'settled') {
            await billing.call('POST', `/holds/${holdId}/settle`, {
              inputTokens: 5,
              outputTokens: 5,
            });
          } else {
            await billing.call('POST', `/holds/${holdId}/void`);
          }
          node.setOptions({ firstTokenLatencyMs: 0 });
          calls = node.stats().byPath['/v1/chat/completions'];
        });
        await waitFor(() => node.stats().outstanding === 0 || undefined, 10_000, 'node idle');
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(node.stats().byPath['/v1/chat/completions']).toBe(calls);
        expect(client.completions.filter((c) => c.jobId === jobId)).toEqual([]);
        expect((await billing.hold(holdId)).status).toBe(finalStatus);
      });
    },
    60_000,
  );

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

  it('dead-letters a job that keeps failing on billing before its model runs, and voids its hold', async () => {
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
    // Billing's catalog away (a settle that fails is queued instead: settlement-outbox.test.ts).
    let catalogCalls = 0;
    billing.fault.fails = (method, url) => {
      const reading = method === 'GET' && url.includes('/models/');
      if (reading) catalogCalls += 1;
      return reading;
    };
    try {
      const { holdId, jobId } = await chatJob(client);
      await waitFor(() => dead.find((d) => d.jobId === jobId), 30_000, 'the dead-lettered job');
      // One catalog read per delivery: the queue's delivery limit (5), then the dead queue.
      expect(catalogCalls).toBe(5);
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
