import { describe, expect, it } from '@jest/globals';
import type {
  Caller,
  InferenceCancelPayload,
  InferenceJobPayload,
  InferenceReplyPayload,
} from '@gateway/contracts';
import { createLogger } from '@gateway/observability';
import type { MessageBus } from '@gateway/messaging';
import { silentStream } from '../testing/silent-log.suite.js';
import { PublishMarks, type Admission } from '@gateway/billing-client';

import {
  admissionRequest,
  InferenceJobs,
  type InferencePlan,
  type JobPublisher,
} from './inference-jobs.js';
import { HoldReleases } from './hold-release.js';
import { ReplyRouter, type ReplyListener } from './job-replies.js';

/** Who finalises the hold when edge cannot go on (job-protocol.md). */

const log = createLogger({ service: 'edge', destination: silentStream });

/** What a worker taking jobs directly was offered, and whether it took them. */
function directWorker(takes: boolean, notTaken: 'refused' | 'unknown' = 'refused') {
  const offered: InferenceJobPayload[] = [];
  const abandoned: string[] = [];
  /** Where each offered job's replies (or its lost answer) would be reported. */
  const listeners: ReplyListener[] = [];
  return {
    offered,
    abandoned,
    listeners,
    offer: async (job: InferenceJobPayload, listener: ReplyListener) => {
      offered.push(job);
      listeners.push(listener);
      return takes ? { abandon: () => void abandoned.push(job.jobId) } : notTaken;
    },
  };
}

function setUp(
  options: {
    publishFails?: boolean;
    publishMarkDelayMs?: number;
    ranAnyway?: boolean;
    direct?: ReturnType<typeof directWorker>;
  } = {},
) {
  const published: InferenceJobPayload[] = [];
  const cancels: InferenceCancelPayload[] = [];
  const voided: string[] = [];
  const refunded: string[] = [];
  const marked: { holdId: string; expiresAtMs: number }[] = [];
  const publisher = {
    publishJob: async (job: InferenceJobPayload) => {
      if (options.publishFails) throw new Error('broker unreachable');
      published.push(job);
    },
    publishCancel: async (cancel: InferenceCancelPayload) => {
      cancels.push(cancel);
    },
  } as unknown as JobPublisher;
  const replies = new ReplyRouter({ bus: {} as MessageBus, prefix: 't.', logger: log });
  const jobs = new InferenceJobs({
    publisher,
    ...(options.direct && { direct: options.direct }),
    replies,
    releases: new HoldReleases({
      billing: {
        void: async (holdId: string) => {
          voided.push(holdId);
          // The worker settled first: the unconfirmed job reached the broker after all.
          if (options.ranAnyway) return { kind: 'already_final', reason: 'settled' };
          return { kind: 'voided', replayed: false };
        },
        refund: async (holdId: string) => {
          refunded.push(holdId);
          return { status: 'refunded' as const, refundedMicroDzd: 7n };
        },
      },
    }),
    billing: {
      admit: async () => admission,
      published: async (holdId: string, expiresAtMs: number) => {
        marked.push({ holdId, expiresAtMs });
        return true;
      },
      // The client's deferral (publish-marks.ts), over this stand-in's `published`.
      publishedLater: (holdId: string, expiresAtMs: number, delayMs: number) =>
        new PublishMarks(async (marks) => {
          marked.push(...marks);
          return new Set(marks.map((mark) => mark.holdId));
        }).markLater(holdId, expiresAtMs, delayMs),
    },
    replyTimeoutMs: 50,
    asyncDeadlineMs: 1_000,
    ...(options.publishMarkDelayMs === undefined
      ? {}
      : { publishMarkDelayMs: options.publishMarkDelayMs }),
    now: () => 1_000_000,
  });
  return { jobs, replies, published, cancels, voided, refunded, marked };
}

const CALLER: Caller = {
  accountId: 'usr_1',
  kind: 'api_key',
  apiKeyName: 'auto',
  webhookFormat: 'B',
  tokenModels: null,
};

const admission: Admission = {
  caller: CALLER,
  hold: { id: 'hold_1', amountMicroDzd: 10n, expiresAt: '2026-01-01T00:00:00.000Z' },
  model: {
    id: 'acme/chat',
    kind: 'chat',
    provider: 'node',
    updatedAt: '2026-01-01T00:00:00.000Z',
  },
  rateLimit: { allowed: true, limit: 100, remaining: 99, resetMs: 0, retryAfterS: 1 },
  replayed: false,
};

const second: Admission = { ...admission, hold: { ...admission.hold, id: 'hold_2' } };

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const reply = (
  type: 'final',
  fields: Partial<InferenceReplyPayload> = {},
): InferenceReplyPayload => ({
  jobId: 'chatcmpl-1',
  seq: 0,
  type,
  data: { text: 'hi' },
  ...fields,
});

const plan: InferencePlan = {
  jobId: 'chatcmpl-1',
  endpoint: 'chat.completions',
  model: 'acme/chat',
  estimate: { inputTokens: 7, maxOutputTokens: null, choices: 1 },
  priority: true,
  stream: false,
  request: { model: 'acme/chat', messages: [] },
  kinds: ['chat', 'completion'],
};

describe('InferenceJobs', () => {
  it('publishes the job with its reply address and deadline', async () => {
    const { jobs, replies, published } = setUp();
    const job = await jobs.start(plan, admission, log);
    expect(published[0]).toEqual({
      jobId: 'chatcmpl-1',
      accountId: 'usr_1',
      holdId: 'hold_1',
      model: 'acme/chat',
      modelKind: 'chat',
      // The worker refetches a cached catalog entry older than this.
      modelUpdatedAt: '2026-01-01T00:00:00.000Z',
      endpoint: 'chat.completions',
      serviceTier: 'priority',
      stream: false,
      request: plan.request,
      deadlineAtMs: 1_000_050,
      promptTokens: 7,
      replyTo: replies.queue,
    });
    job.dispose();
  });

  it('marks the hold published once the job is queued, lasting past its deadline by the longest generation + 60 s', async () => {
    const { jobs, marked } = setUp();
    const job = await jobs.start(plan, admission, log);
    await delay(5);
    await jobs.submitAsync(plan, admission, 'https://example.com/hook', log);
    // The deadline bounds the queue wait only; a started job may then generate 30 min.
    const generationMs = 30 * 60_000;
    expect(marked).toEqual([
      { holdId: 'hold_1', expiresAtMs: 1_000_050 + generationMs + 60_000 },
      { holdId: 'hold_1', expiresAtMs: 1_000_000 + 1_000 + generationMs + 60_000 },
    ]);
    job.dispose();
  });

  it('sends no mark for a synchronous job settled within the mark delay', async () => {
    const { jobs, marked } = setUp({ publishMarkDelayMs: 40 });
    const job = await jobs.start(plan, admission, log);
    job.push(reply('final', { costMicroDzd: '10' }));
    await job.final();
    await delay(80);
    expect(marked).toEqual([]);
  });

  it('marks a synchronous job still running after the delay, or whose settlement was queued', async () => {
    const { jobs, marked } = setUp({ publishMarkDelayMs: 40 });
    const running = await jobs.start(plan, admission, log);
    const pending = await jobs.start({ ...plan, jobId: 'chatcmpl-2' }, second, log);
    // The worker queued the settlement (billing did not answer): the hold is not final yet.
    pending.push({ ...reply('final', { settlementPending: true }), jobId: 'chatcmpl-2' });
    await pending.final();
    await delay(10);
    expect(marked).toEqual([]);
    await delay(80);
    expect(marked.map((mark) => mark.holdId).sort()).toEqual(['hold_1', 'hold_2']);
    running.dispose();
  });

  it('voids the hold when the job cannot be published, and answers GATEWAY_TIMEOUT', async () => {
    const { jobs, voided, replies, marked } = setUp({ publishFails: true });
    await expect(jobs.start(plan, admission, log)).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
    });
    expect(voided).toEqual(['hold_1']);
    expect(marked).toEqual([]);
    expect(replies.waiting).toBe(0);
  });

  it('refunds a synchronous job whose unconfirmed publish ran anyway; accepts such an async job (its webhook reports it)', async () => {
    const { jobs, voided, refunded, marked } = setUp({ publishFails: true, ranAnyway: true });
    await expect(jobs.start(plan, admission, log)).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
    });
    expect(refunded).toEqual(['hold_1']);
    await jobs.submitAsync(plan, second, 'https://example.com/hook', log);
    expect(voided).toEqual(['hold_1', 'hold_2']);
    expect(refunded).toEqual(['hold_1']);
    expect(marked).toEqual([]);
  });

  it('on silence: cancels with reason timeout, voids the hold, GATEWAY_TIMEOUT', async () => {
    const { jobs, voided, cancels, replies } = setUp();
    const job = await jobs.start(plan, admission, log);
    await expect(job.final()).rejects.toMatchObject({ code: 'GATEWAY_TIMEOUT', status: 500 });
    expect(cancels).toEqual([{ jobId: 'chatcmpl-1', reason: 'timeout' }]);
    expect(voided).toEqual(['hold_1']);
    expect(replies.waiting).toBe(0);
  });

  it('hands a synchronous job to a worker directly, without a reply address, and publishes nothing', async () => {
    const direct = directWorker(true);
    const { jobs, published, marked } = setUp({ direct, publishMarkDelayMs: 0 });
    const job = await jobs.start(plan, admission, log);
    expect(direct.offered).toHaveLength(1);
    expect(direct.offered[0]).toMatchObject({ jobId: 'chatcmpl-1', holdId: 'hold_1' });
    expect(direct.offered[0]!.replyTo).toBeUndefined();
    expect(published).toEqual([]);
    // Its hold is marked as a queued job's is: it may run as long.
    await delay(5);
    expect(marked.map((mark) => mark.holdId)).toEqual(['hold_1']);
    // Its replies come to the job as the queue's would; the last one ends the call's claim.
    job.push(reply('final', { costMicroDzd: '10' }));
    await job.final();
    expect(direct.abandoned).toEqual(['chatcmpl-1']);
  });

  it('queues a synchronous job no worker took directly', async () => {
    const direct = directWorker(false);
    const { jobs, replies, published } = setUp({ direct });
    const job = await jobs.start(plan, admission, log);
    expect(direct.offered).toHaveLength(1);
    expect(published).toHaveLength(1);
    expect(published[0]!.replyTo).toBe(replies.queue);
    expect(published[0]!.redelivery).toBeUndefined();
    job.dispose();
  });

  it('queues a job whose direct call failed with no answer as a redelivery: a worker may have read it', async () => {
    const direct = directWorker(false, 'unknown');
    const { jobs, published } = setUp({ direct });
    const job = await jobs.start(plan, admission, log);
    expect(published[0]).toMatchObject({ jobId: 'chatcmpl-1', redelivery: true });
    job.dispose();
  });

  it('queues a direct job whose answer broke off again, as a redelivery, and takes the next run’s replies', async () => {
    const direct = directWorker(true);
    const { jobs, replies, published, voided } = setUp({ direct });
    const job = await jobs.start(plan, admission, log);
    direct.listeners[0]!.replyPathLost('lost on its way from the worker');
    await delay(5);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ jobId: 'chatcmpl-1', redelivery: true });
    expect(published[0]!.replyTo).toBe(replies.queue);
    // The queued run answers through the reply queue, as any other queued job.
    job.push(reply('final', { attemptId: 'second', costMicroDzd: '10' }));
    await expect(job.final()).resolves.toMatchObject({ costMicroDzd: '10' });
    expect(voided).toEqual([]);
  });

  it('gives up on a lost direct job that cannot be queued again: cancels it, voids its hold', async () => {
    const direct = directWorker(true);
    const { jobs, voided, cancels } = setUp({ direct, publishFails: true });
    const job = await jobs.start(plan, admission, log);
    direct.listeners[0]!.replyPathLost();
    await expect(job.final()).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      message: 'The answer was lost on its way from the worker; retry',
    });
    expect(cancels).toEqual([{ jobId: 'chatcmpl-1', reason: 'timeout' }]);
    expect(voided).toEqual(['hold_1']);
  });

  it('async jobs carry the webhook and the account webhook format, no reply address', async () => {
    // Never handed over directly: their result travels as a completion event.
    const direct = directWorker(true);
    const { jobs, published } = setUp({ direct });
    await jobs.submitAsync(
      { ...plan, jobId: 'inf-1', endpoint: 'native' },
      admission,
      'https://h.example/x',
      log,
    );
    expect(published[0]).toMatchObject({
      jobId: 'inf-1',
      webhookUrl: 'https://h.example/x',
      webhookFormat: 'B',
      deadlineAtMs: 1_001_000,
    });
    expect(published[0]!.replyTo).toBeUndefined();
    expect(direct.offered).toEqual([]);
  });

  it('refuses work until the reply queue is consumed', async () => {
    const { jobs } = setUp();
    expect(() => jobs.assertReady()).toThrow(
      expect.objectContaining({ code: 'service_unavailable' }),
    );
    await expect(jobs.admit(plan, {})).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  it("asks billing to admit the plan's own fields, the hold named by the job id", () => {
    const media = {
      kinds: [{ kind: 'image' as const, param: 'messages[0].content[1]' }],
      imageCount: 1,
    };
    expect(
      admissionRequest(
        { ...plan, providers: ['node'], nodeUnsupportedParameter: 'logit_bias', media },
        { authorization: 'Bearer k', requestId: 'req-1' },
      ),
    ).toEqual({
      authorization: 'Bearer k',
      holdId: 'chatcmpl-1',
      model: 'acme/chat',
      estimate: { inputTokens: 7, maxOutputTokens: null, choices: 1 },
      priority: true,
      providers: ['node'],
      kinds: ['chat', 'completion'],
      nodeUnsupportedParameter: 'logit_bias',
      media,
      endpoint: 'chat.completions',
      requestId: 'req-1',
    });
  });
});
