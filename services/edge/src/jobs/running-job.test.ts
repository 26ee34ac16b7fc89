import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import type { InferenceCancelPayload, InferenceReplyPayload } from '@gateway/contracts';
import { createLogger } from '@gateway/observability';
import { silentStream } from '../testing/silent-log.suite.js';
import type { JobPublisher } from './inference-jobs.js';
import { HoldReleases } from './hold-release.js';
import { RunningJob } from './job-replies.js';

/** A job redelivered after its worker died answers again, as another attempt. */

const log = createLogger({ service: 'edge', destination: silentStream });

function setUp(holdSettled = false, replyTimeoutMs = 200) {
  const cancels: InferenceCancelPayload[] = [];
  const voided: string[] = [];
  const refunded: string[] = [];
  const publisher = {
    publishCancel: async (cancel: InferenceCancelPayload) => {
      cancels.push(cancel);
    },
  } as unknown as JobPublisher;
  const job = new RunningJob({
    jobId: 'chatcmpl-1',
    holdId: 'hold_1',
    replyTimeoutMs,
    publisher,
    releases: new HoldReleases({
      billing: {
        void: async (holdId: string) => {
          voided.push(holdId);
          return holdSettled
            ? { kind: 'already_final', reason: 'Hold hold_1 is already settled.' }
            : { kind: 'voided', replayed: false };
        },
        refund: async (holdId: string) => {
          refunded.push(holdId);
          return { status: 'refunded' as const, refundedMicroDzd: 42n };
        },
      },
    }),
    log,
  });
  return { job, cancels, voided, refunded };
}

const chunk = (attemptId: string, seq: number): InferenceReplyPayload => ({
  jobId: 'chatcmpl-1',
  attemptId,
  seq,
  type: 'chunk',
  data: { text: `${attemptId}-${seq}` },
});
const final = (attemptId: string, seq: number): InferenceReplyPayload => ({
  jobId: 'chatcmpl-1',
  attemptId,
  seq,
  type: 'final',
  data: { text: `${attemptId}-final` },
});

describe('RunningJob and the attempts of a job', () => {
  it('never splices a second attempt into a stream: its replies end it with one error', async () => {
    const { job, cancels, voided } = setUp();
    for (let seq = 0; seq < 5; seq += 1) job.push(chunk('a', seq));
    const relayed: unknown[] = [];
    for (let n = 0; n < 5; n += 1) relayed.push((await job.next()).data);
    for (let seq = 0; seq < 8; seq += 1) job.push(chunk('b', seq));
    job.push(final('b', 8));
    await expect(job.next()).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      message: 'The model was interrupted; retry',
    });
    expect(relayed.map((data) => (data as { text: string }).text)).toEqual([
      'a-0',
      'a-1',
      'a-2',
      'a-3',
      'a-4',
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(cancels).toEqual([{ jobId: 'chatcmpl-1', reason: 'timeout' }]);
    // The new attempt settles what it produced after the cancel: edge must not void.
    expect(voided).toEqual([]);
  });

  it('takes the answer of whichever attempt finishes when nothing was relayed', async () => {
    const { job, cancels } = setUp();
    const answer = job.final();
    job.push(final('b', 0));
    job.push(final('a', 0));
    expect((await answer).data).toEqual({ text: 'b-final' });
    expect(cancels).toEqual([]);
  });

  it('switches a stream that relayed nothing yet to the new attempt, from its seq 0', async () => {
    const { job } = setUp();
    const first = job.next();
    job.push(chunk('b', 1));
    job.push(chunk('b', 0));
    expect((await first).data).toEqual({ text: 'b-0' });
    expect((await job.next()).data).toEqual({ text: 'b-1' });
  });
});

describe('RunningJob when edge gives up waiting', () => {
  it('releases a hold still pending by voiding it: nothing was charged', async () => {
    const { job, voided, refunded } = setUp();
    await expect(job.final()).rejects.toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    expect(voided).toEqual(['hold_1']);
    expect(refunded).toEqual([]);
    expect(job.chargeAfterGivingUp).toBe('nothing');
  });

  it('refunds a hold the worker settled for an answer that never arrived', async () => {
    const { job, voided, refunded } = setUp(true);
    await expect(job.final()).rejects.toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    expect(voided).toEqual(['hold_1']);
    expect(refunded).toEqual(['hold_1']);
    expect(job.chargeAfterGivingUp).toBe('nothing');
  });

  it('refunds later an answer settled while billing could not answer the void (nemesis)', async () => {
    const refunded: string[] = [];
    let voidFailures = 1;
    const job = new RunningJob({
      jobId: 'chatcmpl-1',
      holdId: 'hold_1',
      replyTimeoutMs: 20,
      publisher: { publishCancel: async () => {} },
      releases: new HoldReleases({
        billing: {
          void: async () => {
            if (voidFailures-- > 0) throw new GatewayError('service_unavailable', 'stalled');
            return { kind: 'already_final', reason: 'settled' };
          },
          refund: async (holdId: string) => {
            refunded.push(holdId);
            return { status: 'refunded' as const, refundedMicroDzd: 42n };
          },
        },
        minBackoffMs: 5,
      }),
      log,
    });
    let holdFinal = false;
    job.onHoldFinal(() => (holdFinal = true));
    await expect(job.final()).rejects.toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    // Not known when the client is answered: its Idempotency-Key stays spent.
    expect(job.chargeAfterGivingUp).toBe('maybe');
    for (let waitedMs = 0; !holdFinal && waitedMs < 5_000; waitedMs += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(refunded).toEqual(['hold_1']);
  });

  it('keeps the charge of a stream whose chunks reached the client', async () => {
    const { job, refunded } = setUp(true);
    job.push(chunk('a', 0));
    await job.next();
    await expect(job.next()).rejects.toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    expect(refunded).toEqual([]);
    expect(job.chargeAfterGivingUp).toBe('maybe');
  });
});

describe('RunningJob whose answer edge will not send (its Idempotency-Key record not kept)', () => {
  it('refunds the settled answer, even after a chunk was read (none was relayed)', async () => {
    const { job, cancels, refunded } = setUp(true);
    job.push(chunk('a', 0));
    await job.next();
    await job.abandon();
    expect(refunded).toEqual(['hold_1']);
    expect(cancels).toEqual([{ jobId: 'chatcmpl-1', reason: 'timeout' }]);
    expect(job.chargeAfterGivingUp).toBe('nothing');
  });

  it('voids the hold of a job still running', async () => {
    const { job, voided, refunded } = setUp(false);
    await job.abandon();
    expect(voided).toEqual(['hold_1']);
    expect(refunded).toEqual([]);
  });
});

describe('a job kept past its client (a stored background response)', () => {
  it("is not cancelled by the client's departure, and still reads its replies", async () => {
    const { job, cancels } = setUp();
    job.keepAfterClientLeaves();
    job.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    expect([cancels, job.cancelledByClient]).toEqual([[], false]);
    job.push(final('a', 0));
    await expect(job.next()).resolves.toMatchObject({ type: 'final' });
  });
});

describe('RunningJob when its reply queue is lost with a broker node', () => {
  it('gives up at once, not after the reply timeout: hold voided, job cancelled, a retryable error', async () => {
    // A reply timeout far beyond the test: only the loss can end the wait.
    const { job: slow, cancels, voided } = setUp(false, 60_000);
    const waiting = slow.next();
    const startedMs = Date.now();
    slow.replyPathLost();
    await expect(waiting).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      message: 'The answer was lost with a message broker node; retry',
    });
    expect(Date.now() - startedMs).toBeLessThan(1_000);
    expect(voided).toEqual(['hold_1']);
    expect(cancels).toEqual([{ jobId: 'chatcmpl-1', reason: 'timeout' }]);
    expect(slow.chargeAfterGivingUp).toBe('nothing');
  });

  it('refunds a hold the worker already settled (its answer went to the lost queue)', async () => {
    const { job, voided, refunded } = setUp(true);
    const waiting = job.next();
    job.replyPathLost();
    await expect(waiting).rejects.toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    expect(voided).toEqual(['hold_1']);
    expect(refunded).toEqual(['hold_1']);
    expect(job.chargeAfterGivingUp).toBe('nothing');
  });
});
