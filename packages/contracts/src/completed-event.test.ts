import { describe, expect, it } from '@jest/globals';
import { compile } from './ajv.js';
import { envelopeError } from './envelope-error.suite.js';
import {
  completedEvent,
  INFERENCE_FAILED_MESSAGE,
  InferenceCompletedPayloadSchema,
  parseEnvelope,
} from './envelopes.js';
import type {
  CompletedEventJob,
  CompletedEventOf,
  InferenceCompletedPayload,
  UnpricedCompletion,
} from './envelopes.js';

const validatePayload = compile<InferenceCompletedPayload>(InferenceCompletedPayloadSchema);

const job: CompletedEventJob = {
  jobId: 'inf-0b7c',
  requestId: 'req-1',
  accountId: 'acc_1',
  model: 'org/model',
  webhookUrl: 'https://hooks.example.com/in',
  webhookFormat: 'B',
  runtimeMs: 812,
  completedAtMs: 1_750_000_001_000,
};

const unpriced: UnpricedCompletion = {
  ...job,
  status: 'succeeded',
  usage: { promptTokens: 10, completionTokens: 5 },
  results: [{ generated_text: 'hello' }],
};

/** What a queued settlement's `completed` is once it crossed the queue: plain JSON. */
const queued = (completion: object): Record<string, unknown> =>
  JSON.parse(JSON.stringify(completion)) as Record<string, unknown>;

const failure = {
  ...job,
  status: 'failed',
  usage: { promptTokens: 0, completionTokens: 0 },
  costMicroDzd: null,
  error: { type: 'inference_failed', message: INFERENCE_FAILED_MESSAGE },
};

describe('completedEvent', () => {
  it.each<[string, CompletedEventOf, object]>([
    [
      'succeeded, results',
      { outcome: 'succeeded', unpriced, costMicroDzd: 4200n },
      { ...unpriced, costMicroDzd: '4200' },
    ],
    [
      'succeeded, embeddings',
      {
        outcome: 'succeeded',
        unpriced: { ...job, status: 'succeeded', usage: unpriced.usage, embeddings: [[0.1, -0.2]] },
        costMicroDzd: 0n,
      },
      {
        ...job,
        status: 'succeeded',
        usage: unpriced.usage,
        embeddings: [[0.1, -0.2]],
        costMicroDzd: '0',
      },
    ],
    ['failed', { outcome: 'failed', job }, failure],
    [
      'settled (billing prices a queued success)',
      { outcome: 'settled', queued: queued(unpriced), costMicroDzd: 4200n },
      { ...unpriced, costMicroDzd: '4200' },
    ],
    [
      'refused (a queued success whose hold was final already)',
      { outcome: 'refused', queued: queued(unpriced) },
      failure,
    ],
  ])('%s: a valid inference.completed event', (_name, of, expected) => {
    const envelope = completedEvent(of, { id: 'm1', nowMs: 5 });
    expect(envelope).toMatchObject({ v: 1, kind: 'inference.completed', id: 'm1', createdAtMs: 5 });
    expect(validatePayload(envelope.payload)).toBe(true);
    expect(envelope.payload).toEqual(expected);
    // What goes on the wire reads back as it was built.
    const wire = JSON.parse(JSON.stringify(envelope)) as unknown;
    expect(parseEnvelope('inference.completed', wire)).toEqual(envelope);
  });

  it('the failure event keeps only the job of a queued success', () => {
    const { payload } = completedEvent({
      outcome: 'refused',
      queued: queued({ ...unpriced, costMicroDzd: '4200', embeddings: [[1]] }),
    });
    expect(payload).not.toHaveProperty('results');
    expect(payload).not.toHaveProperty('embeddings');
    expect(payload).toMatchObject({ status: 'failed', costMicroDzd: null, usage: failure.usage });
  });

  it('prices a settlement as the worker would have (same event but for the cost)', () => {
    const worker = completedEvent({ outcome: 'succeeded', unpriced, costMicroDzd: 17n });
    const billing = completedEvent({
      outcome: 'settled',
      queued: queued(unpriced),
      costMicroDzd: 17n,
    });
    expect(billing.payload).toEqual(worker.payload);
  });

  it.each<[string, () => unknown, RegExp]>([
    [
      'succeeded with a webhook that is no URL',
      () =>
        completedEvent({
          outcome: 'succeeded',
          unpriced: { ...unpriced, webhookUrl: 'not a url' },
          costMicroDzd: 1n,
        }),
      /payload.webhookUrl/,
    ],
    [
      'failed with a negative runtime',
      () => completedEvent({ outcome: 'failed', job: { ...job, runtimeMs: -1 } }),
      /payload.runtimeMs/,
    ],
    [
      'a queued event without its webhook',
      () =>
        completedEvent({
          outcome: 'settled',
          queued: { ...queued(unpriced), webhookUrl: undefined },
          costMicroDzd: 1n,
        }),
      /webhookUrl is required/,
    ],
    [
      'a queued event that is a failure',
      () => completedEvent({ outcome: 'settled', queued: queued(failure), costMicroDzd: 1n }),
      /invalid inference.completed v1/,
    ],
    [
      'a queued event without its job id, refused',
      () => completedEvent({ outcome: 'refused', queued: { ...queued(unpriced), jobId: '' } }),
      /payload.jobId/,
    ],
    [
      'a negative cost',
      () => completedEvent({ outcome: 'succeeded', unpriced, costMicroDzd: -1n }),
      /payload.costMicroDzd/,
    ],
  ])('refuses %s', (_name, build, message) => {
    const error = envelopeError(build);
    expect(error.reason).toBe('invalid');
    expect(error.message).toMatch(message);
  });

  it('its variants are typed: a success needs its cost, output and usage, a failure has none', () => {
    const typeErrors = (): unknown[] => [
      // @ts-expect-error a priced success without its cost
      completedEvent({ outcome: 'succeeded', unpriced }),
      // @ts-expect-error the cost is µDZD as a bigint, not its wire form
      completedEvent({ outcome: 'succeeded', unpriced, costMicroDzd: '4200' }),
      completedEvent({
        outcome: 'succeeded',
        // @ts-expect-error a success without results or embeddings
        unpriced: { ...job, status: 'succeeded', usage: unpriced.usage },
        costMicroDzd: 1n,
      }),
      // @ts-expect-error a failure carries no cost
      completedEvent({ outcome: 'failed', job, costMicroDzd: 1n }),
      // @ts-expect-error billing's stored event cannot be published without its cost
      completedEvent({ outcome: 'settled', queued: queued(unpriced) }),
    ];
    expect(typeof typeErrors).toBe('function');
  });
});
