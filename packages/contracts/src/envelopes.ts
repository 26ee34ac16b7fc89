import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { describeViolation, lazyValidator, type Validator } from './ajv.js';
import { microDzdToWire } from './money.js';
import { MODEL_KINDS } from './schemas/catalog-names.js';
import { OpenObject, StringEnum } from './schemas/common.js';
import { ALERT_TYPES, AlertDataSchema } from './alerts-api.js';
import { RESPONSE_WEBHOOK_TYPES, ResponseEndedDataSchema } from './responses-state-api.js';

/*
 * Queue message envelopes: `{ v, kind, id, createdAtMs, payload }`.
 *
 * Versioning: within a version, only optional fields may be added (readers ignore unknown fields,
 * so payload objects allow additional properties). Anything else — a new required field, a
 * removed or renamed field, a changed meaning — is a new version: add `v: 2` schemas alongside
 * v1, deploy consumers that accept both, then switch producers, then drop v1.
 *
 * Amounts are µDZD as digit strings: JSON has no bigint (see money.ts microDzdToWire).
 */

export { MODEL_KINDS, type ModelKind } from './schemas/catalog-names.js';

export const INFERENCE_ENDPOINTS = [
  'chat.completions',
  'native',
  'embeddings',
  'images',
  'speech',
  'transcription',
  'video',
  'rerank',
] as const;
export type InferenceEndpoint = (typeof INFERENCE_ENDPOINTS)[number];

const Id = Type.String({ minLength: 1, maxLength: 256 });
const TimestampMs = Type.Integer({ minimum: 0, description: 'Unix time in milliseconds.' });
const TokenCount = Type.Integer({ minimum: 0 });
/** Non-negative µDZD as decimal digits (int64 range). */
const MicroDzdWire = Type.String({ pattern: '^(0|[1-9][0-9]{0,18})$' });
/** The X-Request-Id of the HTTP request behind a job (runtime's requestIdFor keeps it sane). */
const RequestId = Type.Optional(
  Type.String({
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
    description: 'X-Request-Id of the HTTP request the job serves, for logs across services.',
  }),
);

export const InferenceJobPayloadSchema = Type.Object({
  jobId: Id,
  requestId: RequestId,
  accountId: Id,
  holdId: Id,
  model: Type.String({ minLength: 1, maxLength: 256 }),
  modelKind: StringEnum(MODEL_KINDS),
  modelUpdatedAt: Type.Optional(
    Type.String({
      maxLength: 40,
      description:
        'Version (updatedAt) of the catalog entry admitted; a worker whose cached entry is older fetches it again.',
    }),
  ),
  endpoint: StringEnum(INFERENCE_ENDPOINTS),
  serviceTier: StringEnum(['default', 'priority'] as const),
  stream: Type.Boolean(),
  request: OpenObject({ description: 'The validated request body.' }),
  replyTo: Type.Optional(
    Type.String({ minLength: 1, description: 'Reply queue; absent for async (webhook) jobs.' }),
  ),
  webhookUrl: Type.Optional(Type.String({ format: 'http-url' })),
  webhookFormat: Type.Optional(StringEnum(['A', 'B'] as const)),
  deadlineAtMs: TimestampMs,
  redelivery: Type.Optional(
    Type.Literal(true, {
      description:
        'An earlier run may have started: a worker that took the job directly was lost (ADR ' +
        '0072). The worker reads the hold first, as for a redelivered message.',
    }),
  ),
  promptTokens: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "Edge's tokenizer count of the prompt (the hold's estimate); used when the upstream " +
        'reports no usage, e.g. a stream cancelled before its usage chunk.',
    }),
  ),
  pricing: Type.Optional(
    Type.Object(
      {
        inputMicroDzdPerM: MicroDzdWire,
        outputMicroDzdPerM: MicroDzdWire,
        holdMicroDzd: MicroDzdWire,
      },
      {
        description:
          "The hold's prices and amount: the cost of an answer whose settlement is queued " +
          '(billing unreachable) is stated with them, as billing will settle it.',
      },
    ),
  ),
});

export const InferenceCancelPayloadSchema = Type.Object({
  jobId: Id,
  reason: StringEnum(['client_disconnected', 'timeout', 'client_cancelled'] as const),
});

export const InferenceReplyPayloadSchema = Type.Object(
  {
    jobId: Id,
    seq: Type.Integer({ minimum: 0, description: 'Order of replies within a job, from 0.' }),
    type: StringEnum(['chunk', 'final', 'error'] as const),
    attemptId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'The run of the job that produced the reply (random per delivery a worker runs); ' +
          '`seq` counts within it. Edge never joins replies of two attempts in one answer.',
      }),
    ),
    data: Type.Optional(OpenObject({ description: 'Chunk or final response body.' })),
    usage: Type.Optional(
      Type.Object({
        promptTokens: TokenCount,
        completionTokens: TokenCount,
        totalTokens: TokenCount,
      }),
    ),
    costMicroDzd: Type.Optional(MicroDzdWire),
    balanceMicroDzd: Type.Optional(MicroDzdWire),
    warnings: Type.Optional(Type.Array(Type.String())),
    settlementPending: Type.Optional(
      Type.Boolean({
        description:
          'Billing did not answer: the settlement is queued; `costMicroDzd` is what it will ' +
          'charge, and the balance is not known.',
      }),
    ),
    error: Type.Optional(
      Type.Object({
        // A string, not the ErrorCode enum: a code unknown to an older reader must not make the
        // whole reply unreadable (gatewayErrorFromWire maps it to internal_error).
        code: Type.String({ minLength: 1 }),
        message: Type.String(),
      }),
    ),
  },
  {
    // `error` is present exactly when type is 'error'.
    if: { properties: { type: { const: 'error' } } },
    then: { required: ['error'] },
    else: { not: { required: ['error'] } },
  },
);

export const InferenceCompletedPayloadSchema = Type.Object(
  {
    jobId: Id,
    requestId: RequestId,
    accountId: Id,
    model: Type.String({ minLength: 1, maxLength: 256 }),
    status: StringEnum(['succeeded', 'failed'] as const),
    usage: Type.Object({ promptTokens: TokenCount, completionTokens: TokenCount }),
    costMicroDzd: Type.Union([MicroDzdWire, Type.Null()], { description: 'null when failed.' }),
    results: Type.Optional(Type.Array(Type.Object({ generated_text: Type.String() }))),
    embeddings: Type.Optional(Type.Array(Type.Array(Type.Number()))),
    error: Type.Optional(
      Type.Object({ type: Type.Literal('inference_failed'), message: Type.String() }),
    ),
    webhookUrl: Type.String({ format: 'http-url' }),
    webhookFormat: Type.Optional(StringEnum(['A', 'B'] as const)),
    runtimeMs: Type.Integer({ minimum: 0 }),
    completedAtMs: TimestampMs,
  },
  {
    // Spec: results and error never travel together; a failure has an error and no cost.
    if: { properties: { status: { const: 'failed' } } },
    then: {
      required: ['error'],
      properties: { costMicroDzd: { type: 'null' } },
      not: { anyOf: [{ required: ['results'] }, { required: ['embeddings'] }] },
    },
    else: {
      properties: { costMicroDzd: { type: 'string' } },
      not: { required: ['error'] },
    },
  },
);

/** Fixed text of a failed job's event: clients must not branch on it (spec, Events). */
export const INFERENCE_FAILED_MESSAGE = 'Inference failed.';

/**
 * The settlement outbox: the worker queues the end of a hold when billing
 * did not answer, and billing applies it when it can. `producedAtMs`: when the worker decided
 * it (logs; a hold final before it was settled by someone else). `refund`: a settled answer
 * whose final reply nobody could receive. `completed`: an async job's
 * success event without its cost, which billing publishes once the settlement priced it.
 */
export const BillingSettlementPayloadSchema = Type.Object({
  holdId: Id,
  jobId: Id,
  requestId: RequestId,
  action: StringEnum(['settle', 'void', 'refund'] as const),
  inputTokens: Type.Optional(TokenCount),
  outputTokens: Type.Optional(TokenCount),
  producedAtMs: TimestampMs,
  completed: Type.Optional(OpenObject({ description: 'inference.completed minus its cost.' })),
});

/**
 * An account alert, from billing's outbox to the dispatcher (routing key
 * `account.alert` on the events exchange). `eventId` is deterministic (account, kind, scope,
 * threshold, window): the dispatcher stores one delivery per event id, however often it arrives.
 * `data` is the webhook body's `data`, as sent.
 */
export const AccountAlertPayloadSchema = Type.Object({
  eventId: Id,
  accountId: Id,
  type: StringEnum(ALERT_TYPES),
  occurredAtMs: TimestampMs,
  webhookUrl: Type.String({ format: 'http-url', maxLength: 2048 }),
  data: AlertDataSchema,
});

/**
 * The hold of a job: edge admits every job with its job id as the hold id (admission is
 * idempotent on it). A reply names only its job; billing finds the hold of an unread final reply
 * (queue `billing.unread-replies`) with this, the one place that says so.
 */
export const holdIdOfJob = (jobId: string): string => jobId;

/**
 * A background response ended: billing's outbox → the dispatcher (routing key
 * `response.ended` on the events exchange), for the webhook its request named. `eventId` is the
 * response id: one delivery per response, however often the event arrives. `data` is the
 * webhook body's `data`, as sent.
 */
export const ResponseEndedPayloadSchema = Type.Object({
  eventId: Id,
  accountId: Id,
  occurredAtMs: TimestampMs,
  webhookUrl: Type.String({ format: 'http-url', maxLength: 2048 }),
  type: StringEnum(RESPONSE_WEBHOOK_TYPES),
  data: ResponseEndedDataSchema,
});

export type InferenceJobPayload = Static<typeof InferenceJobPayloadSchema>;
export type InferenceReplyPayload = Static<typeof InferenceReplyPayloadSchema>;
export type InferenceCompletedPayload = Static<typeof InferenceCompletedPayloadSchema>;
export type InferenceCancelPayload = Static<typeof InferenceCancelPayloadSchema>;
export type BillingSettlementPayload = Static<typeof BillingSettlementPayloadSchema>;
export type AccountAlertPayload = Static<typeof AccountAlertPayloadSchema>;
export type ResponseEndedPayload = Static<typeof ResponseEndedPayloadSchema>;

export interface EnvelopePayloads {
  'inference.job': InferenceJobPayload;
  'inference.reply': InferenceReplyPayload;
  'inference.completed': InferenceCompletedPayload;
  'inference.cancel': InferenceCancelPayload;
  'billing.settlement': BillingSettlementPayload;
  'account.alert': AccountAlertPayload;
  'response.ended': ResponseEndedPayload;
}
export type EnvelopeKind = keyof EnvelopePayloads;
export const ENVELOPE_KINDS = [
  'inference.job',
  'inference.reply',
  'inference.completed',
  'inference.cancel',
  'billing.settlement',
  'account.alert',
  'response.ended',
] as const satisfies readonly EnvelopeKind[];

/** Versions this build reads. Producers always write the latest. */
export const ENVELOPE_VERSIONS = [1] as const;
export type EnvelopeVersion = (typeof ENVELOPE_VERSIONS)[number];
export const CURRENT_ENVELOPE_VERSION: EnvelopeVersion = 1;

export interface Envelope<K extends EnvelopeKind = EnvelopeKind> {
  v: EnvelopeVersion;
  kind: K;
  /** Unique message id (UUID), for deduplication by consumers. */
  id: string;
  createdAtMs: number;
  payload: EnvelopePayloads[K];
}

function envelopeSchema(kind: EnvelopeKind, payload: TSchema, $id: string) {
  return Type.Object(
    {
      v: Type.Literal(1),
      kind: Type.Literal(kind),
      id: Id,
      createdAtMs: TimestampMs,
      payload,
    },
    { $id, description: `${kind} message, envelope version 1.` },
  );
}

export const ENVELOPE_SCHEMAS = {
  'inference.job': {
    1: envelopeSchema('inference.job', InferenceJobPayloadSchema, 'InferenceJobEnvelopeV1'),
  },
  'inference.reply': {
    1: envelopeSchema('inference.reply', InferenceReplyPayloadSchema, 'InferenceReplyEnvelopeV1'),
  },
  'inference.completed': {
    1: envelopeSchema(
      'inference.completed',
      InferenceCompletedPayloadSchema,
      'InferenceCompletedEnvelopeV1',
    ),
  },
  'inference.cancel': {
    1: envelopeSchema(
      'inference.cancel',
      InferenceCancelPayloadSchema,
      'InferenceCancelEnvelopeV1',
    ),
  },
  'billing.settlement': {
    1: envelopeSchema(
      'billing.settlement',
      BillingSettlementPayloadSchema,
      'BillingSettlementEnvelopeV1',
    ),
  },
  'account.alert': {
    1: envelopeSchema('account.alert', AccountAlertPayloadSchema, 'AccountAlertEnvelopeV1'),
  },
  'response.ended': {
    1: envelopeSchema('response.ended', ResponseEndedPayloadSchema, 'ResponseEndedEnvelopeV1'),
  },
} as const satisfies Record<EnvelopeKind, Record<EnvelopeVersion, TSchema>>;

// Each compiled on its first message: a service reads and writes a few of these kinds.
const validators = Object.fromEntries(
  ENVELOPE_KINDS.map((kind) => [
    kind,
    Object.fromEntries(
      ENVELOPE_VERSIONS.map((v) => [v, lazyValidator<Envelope>(ENVELOPE_SCHEMAS[kind][v])]),
    ),
  ]),
) as Record<EnvelopeKind, Record<EnvelopeVersion, Validator<Envelope>>>;

/** Compiles the validators of these kinds now (a service warms what it reads on its hot path). */
export function warmEnvelopeValidators(...kinds: EnvelopeKind[]): void {
  for (const kind of kinds) {
    for (const v of ENVELOPE_VERSIONS) validators[kind][v].warm();
  }
}

export type EnvelopeErrorReason = 'malformed' | 'unsupported_version' | 'wrong_kind' | 'invalid';

/** A message that cannot be consumed. Consumers dead-letter it rather than retry. */
export class EnvelopeError extends Error {
  readonly reason: EnvelopeErrorReason;
  constructor(reason: EnvelopeErrorReason, message: string) {
    super(message);
    this.name = 'EnvelopeError';
    this.reason = reason;
  }
}

function isEnvelopeVersion(v: unknown): v is EnvelopeVersion {
  return (ENVELOPE_VERSIONS as readonly unknown[]).includes(v);
}

function decode(data: unknown): unknown {
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) return data;
  try {
    return JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch {
    throw new EnvelopeError('malformed', 'message body is not valid JSON');
  }
}

/**
 * Validates a message as an envelope of `kind`. Accepts the parsed object, or raw JSON text/bytes
 * straight off the queue. Throws EnvelopeError naming the problem.
 */
export function parseEnvelope<K extends EnvelopeKind>(kind: K, data: unknown): Envelope<K> {
  const message = decode(data);
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new EnvelopeError('malformed', `${kind} message must be a JSON object`);
  }
  const { v, kind: actualKind } = message as { v?: unknown; kind?: unknown };
  if (!isEnvelopeVersion(v)) {
    throw new EnvelopeError(
      'unsupported_version',
      `unsupported envelope version ${String(JSON.stringify(v)).slice(0, 32)} for ${kind} ` +
        `(supported: ${ENVELOPE_VERSIONS.join(', ')})`,
    );
  }
  if (actualKind !== kind) {
    throw new EnvelopeError('wrong_kind', `expected a ${kind} message`);
  }
  const validate = validators[kind][v];
  if (!validate(message)) {
    const { message: problem } = describeViolation(validate.errors ?? []);
    throw new EnvelopeError('invalid', `invalid ${kind} v${v} message: ${problem}`);
  }
  return message as Envelope<K>;
}

export interface MakeEnvelopeOptions {
  id?: string;
  nowMs?: number;
}

/** Builds and validates a current-version envelope; a producer bug throws here, not downstream. */
export function makeEnvelope<K extends EnvelopeKind>(
  kind: K,
  payload: EnvelopePayloads[K],
  options: MakeEnvelopeOptions = {},
): Envelope<K> {
  return parseEnvelope(kind, envelopeAround(kind, payload, options));
}

/** The envelope around `payload`, not validated yet. */
function envelopeAround(kind: EnvelopeKind, payload: unknown, options: MakeEnvelopeOptions) {
  return {
    v: CURRENT_ENVELOPE_VERSION,
    kind,
    id: options.id ?? randomUUID(),
    createdAtMs: options.nowMs ?? Date.now(),
    payload,
  };
}

/** What every `inference.completed` event says of its job: identity, webhook, timings. */
export type CompletedEventJob = Pick<
  InferenceCompletedPayload,
  | 'jobId'
  | 'requestId'
  | 'accountId'
  | 'model'
  | 'webhookUrl'
  | 'webhookFormat'
  | 'runtimeMs'
  | 'completedAtMs'
>;

/** A success's output: generated texts, or embeddings (never both). */
export type CompletedEventOutput =
  { results: { generated_text: string }[] } | { embeddings: number[][] };

/**
 * A success event without its cost: what the worker queues with a settlement when billing did
 * not answer (`billing.settlement`'s `completed`), for billing to publish once it priced it.
 */
export type UnpricedCompletion = CompletedEventJob & {
  status: 'succeeded';
  usage: { promptTokens: number; completionTokens: number };
} & CompletedEventOutput;

/**
 * The `inference.completed` event to build:
 * - `succeeded`: the worker's success, billing having priced it (`costMicroDzd`);
 * - `failed`: the worker's failure (no usage, no cost, the fixed error);
 * - `settled`: billing's re-emission of a queued settlement's stored `completed` (as read off
 *   the queue, unchecked) with the cost the settlement charged;
 * - `refused`: billing's failure event for a queued settlement whose hold was final already:
 *   the stored `completed` keeps only the job's identity, webhook and timings.
 */
export type CompletedEventOf =
  | { outcome: 'succeeded'; unpriced: UnpricedCompletion; costMicroDzd: bigint }
  | { outcome: 'failed'; job: CompletedEventJob }
  | { outcome: 'settled'; queued: Record<string, unknown>; costMicroDzd: bigint }
  | { outcome: 'refused'; queued: Record<string, unknown> };

/** Fields only a success carries: a failure event built from a stored success drops them. */
const SUCCESS_ONLY_FIELDS = new Set(['status', 'usage', 'costMicroDzd', 'results', 'embeddings']);

/**
 * Builds and validates an `inference.completed` envelope (the worker's and billing's one way to
 * make it). Throws EnvelopeError (`invalid`) when the event breaks the schema, e.g. a `queued`
 * event without its webhook.
 */
export function completedEvent(
  of: CompletedEventOf,
  options: MakeEnvelopeOptions = {},
): Envelope<'inference.completed'> {
  switch (of.outcome) {
    case 'succeeded':
      return makeEnvelope(
        'inference.completed',
        { ...of.unpriced, costMicroDzd: microDzdToWire(of.costMicroDzd) },
        options,
      );
    case 'failed':
      return makeEnvelope('inference.completed', failure(of.job), options);
    case 'settled':
      return parseCompleted(
        { ...of.queued, costMicroDzd: microDzdToWire(of.costMicroDzd) },
        options,
      );
    case 'refused': {
      // Spec: results and error never travel together; a failure has no usage and no cost.
      const job = Object.fromEntries(
        Object.entries(of.queued).filter(([key]) => !SUCCESS_ONLY_FIELDS.has(key)),
      );
      return parseCompleted(failure(job), options);
    }
  }
}

/** A failed job's payload: the job's fields, no usage, no cost and the fixed error. */
function failure<Job extends object>(job: Job) {
  return {
    ...job,
    status: 'failed' as const,
    usage: { promptTokens: 0, completionTokens: 0 },
    costMicroDzd: null,
    error: { type: 'inference_failed' as const, message: INFERENCE_FAILED_MESSAGE },
  };
}

/** A payload assembled from a stored, unchecked event: the schema is its only type check. */
function parseCompleted(
  payload: Record<string, unknown>,
  options: MakeEnvelopeOptions,
): Envelope<'inference.completed'> {
  return parseEnvelope(
    'inference.completed',
    envelopeAround('inference.completed', payload, options),
  );
}
