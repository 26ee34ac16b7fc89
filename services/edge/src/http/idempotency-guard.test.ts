import { describe, expect, it } from '@jest/globals';
import type { Response } from 'express';
import type { BillingClient } from '@gateway/billing-client';
import { GatewayError } from '@gateway/contracts';
import { createLogger } from '@gateway/observability';
import type { RunningJob } from '../jobs/job-replies.js';
import { settleGuard, spendBeforeStreaming } from '../routes/inference-flow.js';
import { silentStream } from '../testing/silent-log.suite.js';
import { IdempotencyGuard } from './idempotency.js';
import { sendJson } from './send-answer.js';

/*
 * An answer goes out once it is kept for its Idempotency-Key (ADR 0067): billing refunds a claim
 * left in progress past its lease. When billing says the claim was lost (refunded), the answer is
 * not sent and the job's hold is released; when billing does not answer, the answer is sent and
 * its hold reported delivered, so the lapsed claim is not refunded. A stream whose key could not
 * be spent never starts.
 */

const log = createLogger({ service: 'edge', destination: silentStream });
const ref = { accountId: 'usr_1', key: 'k', requestHash: 'a'.repeat(64) };

function guardWith(complete: () => Promise<void>) {
  const calls: string[] = [];
  const marked: string[] = [];
  const billing = {
    completeIdempotencyKey: async () => {
      calls.push('complete');
      await complete();
    },
    releaseIdempotencyKey: async () => {
      calls.push('release');
    },
  } as unknown as BillingClient;
  const delivered = { mark: (holdId: string) => marked.push(holdId) };
  return {
    guard: new IdempotencyGuard(billing, ref, log, { holdId: 'hold_1', delivered }),
    calls,
    marked,
  };
}

function fakeResponse() {
  const sent: string[] = [];
  const res = {
    status: () => res,
    set: () => res,
    send: (body: string) => {
      sent.push(body);
      return res;
    },
  };
  return { res: res as unknown as Response, sent };
}

function fakeJob() {
  const abandoned: string[] = [];
  const job = {
    cancelledByClient: false,
    chargeAfterGivingUp: undefined,
    abandon: async () => {
      abandoned.push('abandon');
    },
  };
  return { job: job as unknown as RunningJob, abandoned };
}

const claimLost = () =>
  Promise.reject(new GatewayError('conflict', 'The Idempotency-Key claim was lost'));
const billingAway = () =>
  Promise.reject(new GatewayError('service_unavailable', 'Billing did not answer'));

describe('an answer for an Idempotency-Key', () => {
  it('is sent once kept', async () => {
    const { guard } = guardWith(async () => {});
    const { res, sent } = fakeResponse();
    await sendJson(res, 200, { ok: true }, guard);
    expect(sent).toEqual(['{"ok":true}']);
  });

  it('is sent when billing did not answer the store, its hold reported delivered', async () => {
    const { guard, calls, marked } = guardWith(billingAway);
    const { res, sent } = fakeResponse();
    await sendJson(res, 200, { ok: true }, guard);
    expect(sent).toEqual(['{"ok":true}']);
    expect(marked).toEqual(['hold_1']);
    expect(guard.claimLost).toBe(false);
    // Finished: a later failure path neither releases the key nor touches the hold.
    const { job, abandoned } = fakeJob();
    await settleGuard(guard, job);
    expect(calls).toEqual(['complete']);
    expect(abandoned).toEqual([]);
  });

  it('is not sent when the claim was lost, and its job is abandoned (hold released)', async () => {
    const { guard, marked } = guardWith(claimLost);
    const { res, sent } = fakeResponse();
    await expect(sendJson(res, 200, { ok: true }, guard)).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(sent).toEqual([]);
    expect(guard.claimLost).toBe(true);
    expect(marked).toEqual([]);
    const { job, abandoned } = fakeJob();
    await settleGuard(guard, job);
    expect(abandoned).toEqual(['abandon']);
  });

  it('of an accepted async job is sent even when its claim was lost (its webhook comes anyway)', async () => {
    const { guard } = guardWith(claimLost);
    const { res, sent } = fakeResponse();
    await sendJson(res, 202, { id: 'inf-1' }, guard, { sendUnkept: true });
    expect(sent).toEqual(['{"id":"inf-1"}']);
  });
});

describe('a stream with an Idempotency-Key', () => {
  it('starts once its key is spent', async () => {
    const { guard, calls } = guardWith(async () => {});
    const { job, abandoned } = fakeJob();
    await spendBeforeStreaming(guard, job);
    expect(calls).toEqual(['complete']);
    expect(abandoned).toEqual([]);
  });

  it('never starts when its key could not be spent: the job is abandoned', async () => {
    const { guard } = guardWith(billingAway);
    const { job, abandoned } = fakeJob();
    await expect(spendBeforeStreaming(guard, job)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(abandoned).toEqual(['abandon']);
  });
});
