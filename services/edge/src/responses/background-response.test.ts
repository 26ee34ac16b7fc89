import { describe, expect, it } from '@jest/globals';
import { GatewayError, validateResponses } from '@gateway/contracts';
import type { BillingClient } from '@gateway/billing-client';
import type { Logger } from '@gateway/observability';
import type { RunningJob } from '../jobs/job-replies.js';
import { BackgroundResponses } from './background-response.js';
import type { ResponseShell } from './response-object.js';

/* A background run without a broker or billing: what it stores, refunds and releases. */

const ID = `resp_${'a'.repeat(32)}`;
const shell: ResponseShell = {
  id: ID,
  createdAtS: 1,
  request: validateResponses({ model: 'm', input: 'x', background: true }),
  store: true,
};
const owner = { accountId: 'acct', reader: null };
const log = { info: () => {}, error: () => {}, warn: () => {} } as unknown as Logger;

/** A job that streams one chunk and ends (or fails with `error`). */
function job(error?: GatewayError): RunningJob {
  const replies: unknown[] = [
    { type: 'chunk', data: { choices: [{ index: 0, delta: { content: 'Hi' } }] } },
    {
      type: 'final',
      data: { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      jobId: ID,
      costMicroDzd: '1000',
    },
  ];
  return {
    jobId: ID,
    next: async () => {
      if (error && replies.length === 1) throw error;
      return replies.shift();
    },
  } as unknown as RunningJob;
}

function billing(finish: (response: Record<string, unknown>) => Promise<boolean>) {
  const calls = { stored: [] as Record<string, unknown>[], refunded: [] as string[] };
  const client = {
    finishResponse: async (
      _a: string,
      _id: string,
      body: { response: Record<string, unknown> },
    ) => {
      calls.stored.push(body.response);
      return finish(body.response);
    },
    refund: async (holdId: string) => {
      calls.refunded.push(holdId);
      return { status: 'refunded', refundedMicroDzd: 1000n };
    },
  } as unknown as BillingClient;
  return { client, calls };
}

describe('a background run', () => {
  it('stores its result once and gives its slot back', async () => {
    const { client, calls } = billing(async () => true);
    const runs = new BackgroundResponses(client, 1);
    const release = runs.reserve();
    expect(runs.running).toBe(1);
    await runs.run(job(), shell, owner, log, release);
    expect(calls.stored.map((r) => [r.status, r.background])).toEqual([['completed', true]]);
    expect(calls.refunded).toEqual([]);
    expect(runs.running).toBe(0);
  });

  it('refunds an answer produced after a cancel was stored: it reaches nobody', async () => {
    const { client, calls } = billing(async () => false);
    const runs = new BackgroundResponses(client, 1);
    await runs.run(job(), shell, owner, log, runs.reserve());
    expect(calls.refunded).toEqual([ID]);
  });

  it('keeps the partial charge of a job the cancel stopped', async () => {
    const { client, calls } = billing(async () => false);
    const runs = new BackgroundResponses(client, 1);
    const stopped = new GatewayError('GATEWAY_TIMEOUT', 'The request was cancelled.');
    await runs.run(job(stopped), shell, owner, log, runs.reserve());
    expect(calls.stored.map((r) => r.status)).toEqual(['failed']);
    expect(calls.refunded).toEqual([]);
  });

  it('stores a result billing refuses as it is as failed, saying why', async () => {
    const { client, calls } = billing(async (response) => {
      if (response.status === 'completed') {
        throw new GatewayError('invalid_request_body', 'too large', { param: 'response' });
      }
      return true;
    });
    const runs = new BackgroundResponses(client, 1);
    await runs.run(job(), shell, owner, log, runs.reserve());
    expect(calls.stored.at(-1)).toMatchObject({
      status: 'failed',
      output: [],
      error: { code: 'response_not_stored' },
    });
  });

  it('reserves slots before admission: one over the bound is 503, and none while draining', async () => {
    const { client } = billing(async () => true);
    const runs = new BackgroundResponses(client, 2);
    const first = runs.reserve();
    const second = runs.reserve();
    expect(() => runs.reserve()).toThrow(GatewayError);
    first();
    first(); // a second release gives nothing back twice
    expect(runs.running).toBe(1);
    const drained = runs.drain(5_000);
    expect(() => runs.reserve()).toThrow(GatewayError);
    await runs.run(job(), shell, owner, log, () => {});
    expect(runs.running).toBe(1);
    await expect(Promise.race([drained, Promise.resolve('waiting')])).resolves.toBe('waiting');
    // The last run gives its slot back: the drain ends at once.
    second();
    await expect(drained).resolves.toBeUndefined();
  });
});
