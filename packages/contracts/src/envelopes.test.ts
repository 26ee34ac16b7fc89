import { describe, expect, it } from '@jest/globals';
import { makeEnvelope, parseEnvelope } from './envelopes.js';
import { envelopeError } from './envelope-error.suite.js';
import type {
  EnvelopeKind,
  InferenceCompletedPayload,
  InferenceJobPayload,
  InferenceReplyPayload,
} from './envelopes.js';
import { microDzdFromWire, microDzdToWire } from './money.js';

const job: InferenceJobPayload = {
  jobId: 'inf-0b7c',
  accountId: 'acc_1',
  holdId: 'hold_1',
  model: 'org/model',
  modelKind: 'chat',
  endpoint: 'chat.completions',
  serviceTier: 'priority',
  stream: true,
  request: { model: 'org/model', messages: [{ role: 'user', content: 'hi' }] },
  replyTo: 'edge.replies.pod-1',
  deadlineAtMs: 1_750_000_060_000,
};

const reply: InferenceReplyPayload = {
  jobId: 'inf-0b7c',
  seq: 3,
  type: 'final',
  data: { id: 'chatcmpl-1', choices: [] },
  usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
  costMicroDzd: microDzdToWire(4200n),
  balanceMicroDzd: '999995800',
  warnings: ["Parameter 'top_p' is not supported by this model and was ignored."],
};

const succeeded: InferenceCompletedPayload = {
  jobId: 'inf-0b7c',
  accountId: 'acc_1',
  model: 'org/model',
  status: 'succeeded',
  usage: { promptTokens: 10, completionTokens: 5 },
  costMicroDzd: '4200',
  results: [{ generated_text: 'hello' }],
  webhookUrl: 'https://hooks.example.com/in',
  runtimeMs: 812,
  completedAtMs: 1_750_000_001_000,
};

const failed: InferenceCompletedPayload = {
  jobId: 'inf-0b7c',
  accountId: 'acc_1',
  model: 'org/model',
  status: 'failed',
  usage: { promptTokens: 0, completionTokens: 0 },
  costMicroDzd: null,
  error: { type: 'inference_failed', message: 'Inference failed' },
  webhookUrl: 'https://hooks.example.com/in',
  runtimeMs: 0,
  completedAtMs: 1_750_000_001_000,
};

describe('makeEnvelope / parseEnvelope round trips', () => {
  it.each<[EnvelopeKind, object]>([
    ['inference.job', job],
    [
      'inference.job',
      { ...job, replyTo: undefined, stream: false, webhookUrl: 'https://h.example/x' },
    ],
    ['inference.reply', reply],
    ['inference.reply', { jobId: 'j', seq: 0, type: 'chunk', data: { choices: [] } }],
    [
      'inference.reply',
      { jobId: 'j', seq: 1, type: 'error', error: { code: 'GATEWAY_TIMEOUT', message: 'timeout' } },
    ],
    ['inference.completed', succeeded],
    ['inference.completed', { ...succeeded, results: undefined, embeddings: [[0.1, -0.2]] }],
    ['inference.completed', failed],
    ['inference.cancel', { jobId: 'j', reason: 'client_disconnected' }],
  ])('%s', (kind, payload) => {
    const clean = JSON.parse(JSON.stringify(payload)) as never;
    const envelope = makeEnvelope(kind, clean, { nowMs: 1_750_000_000_000 });
    expect(envelope).toMatchObject({ v: 1, kind, createdAtMs: 1_750_000_000_000, payload: clean });
    expect(envelope.id).toMatch(/^[0-9a-f-]{36}$/);
    const text = JSON.stringify(envelope);
    expect(parseEnvelope(kind, text)).toEqual(envelope);
    expect(parseEnvelope(kind, Buffer.from(text))).toEqual(envelope);
    expect(parseEnvelope(kind, new TextEncoder().encode(text))).toEqual(envelope);
    expect(parseEnvelope(kind, JSON.parse(text))).toEqual(envelope);
  });

  it('uses the given id and a fresh one otherwise', () => {
    expect(makeEnvelope('inference.job', job, { id: 'msg-1' }).id).toBe('msg-1');
    expect(makeEnvelope('inference.job', job).id).not.toBe(makeEnvelope('inference.job', job).id);
  });

  it('carries money as digit strings that convert back to bigint exactly', () => {
    const big = 9_007_199_254_740_993n; // beyond 2^53: a JSON number would lose it
    const parsed = parseEnvelope(
      'inference.reply',
      JSON.stringify(
        makeEnvelope('inference.reply', { ...reply, balanceMicroDzd: microDzdToWire(big) }),
      ),
    );
    expect(microDzdFromWire(parsed.payload.balanceMicroDzd ?? '')).toBe(big);
  });

  it('accepts unknown optional fields (tolerant reader within a version)', () => {
    const envelope = { ...makeEnvelope('inference.job', job), traceId: 't' };
    const withExtra = { ...envelope, payload: { ...envelope.payload, priorityBoost: 2 } };
    expect(parseEnvelope('inference.job', withExtra).payload).toMatchObject({ priorityBoost: 2 });
  });
});

describe('parseEnvelope rejections', () => {
  const valid = makeEnvelope('inference.job', job);

  it.each<[string, unknown]>([
    ['v 2', 2],
    ['v 0', 0],
    ['v "1"', '1'],
    ['v missing', undefined],
  ])('unsupported version: %s', (_name, v) => {
    const error = envelopeError(() => parseEnvelope('inference.job', { ...valid, v }));
    expect(error.reason).toBe('unsupported_version');
    expect(error.message).toContain(`version ${String(JSON.stringify(v))}`);
    expect(error.message).toContain('inference.job');
  });

  it('names version 2 explicitly', () => {
    expect(() => parseEnvelope('inference.job', { ...valid, v: 2 })).toThrow(
      'unsupported envelope version 2 for inference.job (supported: 1)',
    );
  });

  it('rejects the wrong kind', () => {
    const error = envelopeError(() => parseEnvelope('inference.reply', valid));
    expect(error.reason).toBe('wrong_kind');
  });

  it.each<[string, unknown]>([
    ['invalid JSON text', '{"v":1,'],
    ['invalid JSON bytes', Buffer.from('nope')],
    ['array', [valid]],
    ['null', null],
    ['number', 1],
  ])('rejects a malformed message: %s', (_name, data) => {
    expect(envelopeError(() => parseEnvelope('inference.job', data)).reason).toBe('malformed');
  });

  it.each<[string, EnvelopeKind, Record<string, unknown>, RegExp]>([
    [
      'job without deadline',
      'inference.job',
      { ...job, deadlineAtMs: undefined },
      /deadlineAtMs is required/,
    ],
    [
      'job bad modelKind',
      'inference.job',
      { ...job, modelKind: 'llm' },
      /payload.modelKind must be one of/,
    ],
    ['job bad endpoint', 'inference.job', { ...job, endpoint: 'completions' }, /payload.endpoint/],
    ['job bad tier', 'inference.job', { ...job, serviceTier: 'auto' }, /payload.serviceTier/],
    [
      'job request not object',
      'inference.job',
      { ...job, request: 'x' },
      /payload.request must be an object/,
    ],
    ['job bad webhook', 'inference.job', { ...job, webhookUrl: 'nope' }, /payload.webhookUrl/],
    ['job empty jobId', 'inference.job', { ...job, jobId: '' }, /payload.jobId must not be empty/],
    ['reply negative seq', 'inference.reply', { ...reply, seq: -1 }, /payload.seq must be >= 0/],
    ['reply bad type', 'inference.reply', { ...reply, type: 'done' }, /payload.type/],
    [
      'reply fractional cost',
      'inference.reply',
      { ...reply, costMicroDzd: '1.5' },
      /payload.costMicroDzd/,
    ],
    [
      'reply negative cost',
      'inference.reply',
      { ...reply, costMicroDzd: '-1' },
      /payload.costMicroDzd/,
    ],
    [
      'reply leading zero',
      'inference.reply',
      { ...reply, costMicroDzd: '01' },
      /payload.costMicroDzd/,
    ],
    [
      'reply numeric cost',
      'inference.reply',
      { ...reply, costMicroDzd: 4200 },
      /payload.costMicroDzd must be a string/,
    ],
    [
      'error reply without error',
      'inference.reply',
      { jobId: 'j', seq: 0, type: 'error' },
      /payload.error is required/,
    ],
    [
      'final reply with error',
      'inference.reply',
      { ...reply, error: { code: 'internal_error', message: 'x' } },
      /payload.error is not allowed here/,
    ],
    [
      'completed bad status',
      'inference.completed',
      { ...succeeded, status: 'queued' },
      /payload.status/,
    ],
    [
      'succeeded with null cost',
      'inference.completed',
      { ...succeeded, costMicroDzd: null },
      /payload.costMicroDzd/,
    ],
    [
      'succeeded with error',
      'inference.completed',
      { ...succeeded, error: failed.error },
      /payload.error is not allowed here/,
    ],
    [
      'failed with cost',
      'inference.completed',
      { ...failed, costMicroDzd: '0' },
      /payload.costMicroDzd must be null/,
    ],
    [
      'failed without error',
      'inference.completed',
      { ...failed, error: undefined },
      /payload.error is required/,
    ],
    [
      'failed with results',
      'inference.completed',
      { ...failed, results: [] },
      /invalid inference.completed v1/,
    ],
    [
      'error of another type',
      'inference.completed',
      { ...failed, error: { type: 'other', message: 'x' } },
      /payload.error.type/,
    ],
    [
      'completed without webhookUrl',
      'inference.completed',
      { ...succeeded, webhookUrl: undefined },
      /webhookUrl is required/,
    ],
  ])('%s', (_name, kind, payload, message) => {
    const data = {
      v: 1,
      kind,
      id: 'm1',
      createdAtMs: 1,
      payload: JSON.parse(JSON.stringify(payload)),
    };
    const error = envelopeError(() => parseEnvelope(kind, data));
    expect(error.reason).toBe('invalid');
    expect(error.message).toMatch(message);
  });

  it('makeEnvelope refuses an invalid payload at the producer', () => {
    expect(() => makeEnvelope('inference.job', { ...job, stream: 'yes' } as never)).toThrow(
      /payload.stream must be a boolean/,
    );
  });
});
