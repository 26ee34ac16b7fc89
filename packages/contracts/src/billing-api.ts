import { Type } from '@sinclair/typebox';
import type { Static, TObject, TProperties } from '@sinclair/typebox';
import {
  MODEL_KINDS,
  MODEL_PROVIDERS,
  NODE_HEALTH_ERROR_KINDS,
  NODE_PROTOCOLS,
} from './schemas/catalog-names.js';
import { MEDIA_KINDS } from './schemas/chat-completion.js';
import { StringEnum } from './schemas/common.js';
import { LIMITS } from './schemas/limits.js';

/*
 * Billing's internal API, defined once: the request schemas billing validates against and the
 * answers edge and the inference worker read (through @gateway/billing-client). Money crosses as
 * strings of integer µDZD, dates as ISO 8601; keys are camelCase. Refusals are the gateway's one
 * error body; those of `authenticate` and `admissions` carry the rate-limit decision as
 * `X-RateLimit-*` headers.
 *
 * The hot path is one call per step: `admissions` (the credential itself, not an echoed
 * principal, plus the request's estimate: authentication, suspension, token state, rate limit,
 * model, token models, budget and balance, and the hold, in one database transaction;
 * idempotent on the caller's hold id), then the worker's `settle` or `void`. Routes that place no
 * hold use `authenticate`, which also counts the request against the rate limit.
 */

export const BILLING_API_PREFIX = '/internal/v1';

// The catalog's names live in a module the browser app may import (no Node-only code).
export { MODEL_PROVIDERS, NODE_HEALTH_ERROR_KINDS, NODE_PROTOCOLS };
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];
export type NodeProtocol = (typeof NODE_PROTOCOLS)[number];

const MicroDzd = Type.String({ pattern: '^(0|[1-9][0-9]{0,18})$', description: 'µDZD' });
const IsoDate = Type.String({ minLength: 1, maxLength: 40 });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** Caller-chosen hold ids (edge uses the job id): safe in URLs and logs. */
export const HoldIdSchema = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' });

/**
 * The one representation of a rate-limit decision: one request counted against the account's
 * current window and, when they have limits of their own, the key's and the scoped token's,
 * with the numbers for the headers (`rateLimitHeaders`): the tightest.
 */
/** Whose request limit the headers report (the tightest that applies). */
export const RATE_LIMIT_SCOPES = ['account', 'api_key', 'scoped_token'] as const;
export type RateLimitScope = (typeof RATE_LIMIT_SCOPES)[number];

/**
 * A tokens-per-minute window of a key or scoped token: the tightest that
 * applies, after this request's tokens were counted (`X-RateLimit-*-Tokens`).
 */
export const TokenRateLimitSchema = Type.Object({
  limit: Count,
  remaining: Count,
  resetMs: Count,
});
export type TokenRateLimit = Static<typeof TokenRateLimitSchema>;

export const RateLimitDecisionSchema = Type.Object({
  /** false when any limit refused the request (requests or tokens per minute). */
  allowed: Type.Boolean(),
  /** Requests allowed in the window (`X-RateLimit-Limit`). */
  limit: Count,
  /** Requests left in the window after this one, never below 0 (`X-RateLimit-Remaining`). */
  remaining: Count,
  /** Unix ms when the window ends (`X-RateLimit-Reset`). */
  resetMs: Count,
  /** Whole seconds until the window ends, at least 1 (`Retry-After`). */
  retryAfterS: Count,
  /** Whose requests-per-minute limit `limit`/`remaining` are; the account's when absent. */
  scope: Type.Optional(StringEnum(RATE_LIMIT_SCOPES)),
  /** Present when a tokens-per-minute limit applied (admissions only). */
  tokens: Type.Optional(TokenRateLimitSchema),
});
export type RateLimitDecision = Static<typeof RateLimitDecisionSchema>;

/** Who is calling, as much as edge needs to know. */
export const CallerSchema = Type.Object({
  accountId: Type.String({ minLength: 1, maxLength: 64 }),
  kind: StringEnum(['api_key', 'scoped_token'] as const),
  apiKeyName: Type.String({ minLength: 1, maxLength: LIMITS.apiKeyNameMaxLength }),
  webhookFormat: StringEnum(['A', 'B'] as const),
  /** A scoped token's model list (null: any model; always null for an API key). */
  tokenModels: Type.Union([Type.Array(Type.String()), Type.Null()]),
});
export type Caller = Static<typeof CallerSchema>;

const Authorization = Type.String({ maxLength: 16_384, description: 'The client’s header' });

export const AuthenticateRequestSchema = Type.Object(
  {
    authorization: Type.Optional(Authorization),
    /**
     * false: authenticate without counting (edge claims an Idempotency-Key for the account
     * before the admission that counts the request).
     */
    count: Type.Optional(Type.Boolean()),
  },
  { $id: 'BillingAuthenticateRequest', additionalProperties: false },
);
export type AuthenticateRequest = Static<typeof AuthenticateRequestSchema>;

export const AuthenticateResponseSchema = Type.Object({
  caller: CallerSchema,
  rateLimit: RateLimitDecisionSchema,
});
export type AuthenticateResponse = Static<typeof AuthenticateResponseSchema>;

export const AdmissionRequestSchema = Type.Object(
  {
    authorization: Type.Optional(Authorization),
    holdId: HoldIdSchema,
    model: Type.String({ minLength: 1, maxLength: LIMITS.modelIdMaxLength }),
    estimate: Type.Object(
      {
        /** Prompt tokens, counted with the gateway's tokenizer (an upper bound). */
        inputTokens: Count,
        /** Output cap per choice the client asked for; null: the model's cap. */
        maxOutputTokens: Type.Union([
          Type.Integer({ minimum: 0, maximum: LIMITS.tokensMax }),
          Type.Null(),
        ]),
        choices: Type.Integer({ minimum: 1, maximum: LIMITS.nMax }),
      },
      { additionalProperties: false },
    ),
    priority: Type.Boolean(),
    /** Providers and kinds the calling endpoint serves; any when omitted. */
    providers: Type.Optional(Type.Array(StringEnum(MODEL_PROVIDERS), { maxItems: 2 })),
    kinds: Type.Optional(Type.Array(StringEnum(MODEL_KINDS), { maxItems: MODEL_KINDS.length })),
    /** The first parameter default models refuse: 400 for a model of provider `node`. */
    nodeUnsupportedParameter: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /**
     * Chat content beyond text: each kind with its first part, refused with 400
     * naming the part unless the model declares it; every image adds the model's per-image
     * token ceiling to the hold.
     */
    media: Type.Optional(
      Type.Object(
        {
          kinds: Type.Array(
            Type.Object(
              {
                kind: StringEnum(MEDIA_KINDS),
                param: Type.String({ minLength: 1, maxLength: 64 }),
              },
              { additionalProperties: false },
            ),
            { maxItems: MEDIA_KINDS.length },
          ),
          imageCount: Type.Integer({ minimum: 0, maximum: LIMITS.mediaPartsMaxItems }),
        },
        { additionalProperties: false },
      ),
    ),
    /** Kept on the hold for the request's usage record. */
    endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { $id: 'BillingAdmissionRequest', additionalProperties: false },
);
export type AdmissionRequest = Static<typeof AdmissionRequestSchema>;

export const AdmittedModelSchema = Type.Object({
  id: Type.String(),
  kind: StringEnum(MODEL_KINDS),
  provider: StringEnum(MODEL_PROVIDERS),
  /** The catalog entry's version: a worker whose cached entry is older fetches it again. */
  updatedAt: IsoDate,
});

export const AdmissionResponseSchema = Type.Object({
  caller: CallerSchema,
  hold: Type.Object({ id: Type.String(), amountMicroDzd: MicroDzd, expiresAt: IsoDate }),
  model: AdmittedModelSchema,
  rateLimit: RateLimitDecisionSchema,
  /** The hold already existed (a retried call): nothing was reserved again. */
  replayed: Type.Boolean(),
  /**
   * The prices the hold snapshotted (µDZD per million tokens), so the worker can state the cost
   * of an answer whose settlement had to be queued. Absent on a replayed
   * admission, whose hold may have snapshotted other prices.
   */
  prices: Type.Optional(Type.Object({ inputMicroDzdPerM: MicroDzd, outputMicroDzdPerM: MicroDzd })),
});
export type AdmissionResponse = Static<typeof AdmissionResponseSchema>;

/**
 * What the worker knows of a job's run, for its usage record (all optional): when it picked the
 * job (queue latency = that − admission) and how long the generation took.
 */
const RunTimings = {
  startedAtMs: Type.Optional(Count),
  generationMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86_400_000 })),
};

export const SettleRequestSchema = Type.Object(
  {
    inputTokens: Count,
    outputTokens: Count,
    /** Of outputTokens, those the model spent reasoning (recorded, not priced apart). */
    reasoningTokens: Type.Optional(Count),
    /** The client cancelled: the usage record says `cancelled` (the usage is still charged). */
    cancelled: Type.Optional(Type.Boolean()),
    ...RunTimings,
  },
  { $id: 'BillingSettleRequest', additionalProperties: false },
);
export type SettleRequest = Static<typeof SettleRequestSchema>;

/** Why a request ends without a charge (its usage record's outcome); `failed` by default. */
export const VOID_OUTCOMES = ['failed', 'cancelled', 'refused'] as const;
export type VoidOutcomeReason = (typeof VOID_OUTCOMES)[number];

export const VoidRequestSchema = Type.Object(
  { outcome: Type.Optional(StringEnum(VOID_OUTCOMES)), ...RunTimings },
  { $id: 'BillingVoidRequest', additionalProperties: false },
);
export type VoidRequest = Static<typeof VoidRequestSchema>;

const BalanceWire = Type.Object({
  balanceMicroDzd: MicroDzd,
  pendingMicroDzd: MicroDzd,
  availableMicroDzd: MicroDzd,
});

export const SettleResponseSchema = Type.Object({
  holdId: Type.String(),
  costMicroDzd: MicroDzd,
  releasedMicroDzd: MicroDzd,
  balance: BalanceWire,
  replayed: Type.Boolean(),
});
export type SettleResponse = Static<typeof SettleResponseSchema>;

export const VoidResponseSchema = Type.Object({
  holdId: Type.String(),
  status: StringEnum(['voided', 'expired'] as const),
  replayed: Type.Boolean(),
});
export type VoidResponse = Static<typeof VoidResponseSchema>;

/** Marks per `POST /holds/published` call (edge batches the marks of jobs it queued). */
export const MAX_PUBLISH_MARKS = 256;

/**
 * `POST /holds/published` (edge only): these holds' jobs reached the broker; each hold lives
 * until `expiresAtMs` (the job's end + settlement time) instead of its publish grace.
 */
export const PublishMarksRequestSchema = Type.Object(
  {
    holds: Type.Array(
      Type.Object(
        { holdId: HoldIdSchema, expiresAtMs: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_PUBLISH_MARKS },
    ),
  },
  { $id: 'BillingPublishMarksRequest', additionalProperties: false },
);
export type PublishMarksRequest = Static<typeof PublishMarksRequestSchema>;

/** The holds marked; one not listed was already final (or unknown). */
export const PublishMarksResponseSchema = Type.Object({ published: Type.Array(HoldIdSchema) });
export type PublishMarksResponse = Static<typeof PublishMarksResponseSchema>;

/**
 * `POST /holds/{id}/refund`: the settled hold's answer was delivered to nobody;
 * `not_settled` when the hold charged nothing (pending, voided, expired).
 */
export const RefundResponseSchema = Type.Object({
  holdId: Type.String(),
  status: StringEnum(['refunded', 'not_settled'] as const),
  refundedMicroDzd: MicroDzd,
  replayed: Type.Boolean(),
});
export type RefundResponse = Static<typeof RefundResponseSchema>;

/**
 * `POST /holds/{id}/delivered` (edge only): edge handed the hold's answer to its request but
 * the acknowledgement of its reply was lost; an unread copy of the reply is not refunded.
 * `refunded`: it was, before the mark.
 */
export const AnswerDeliveredResponseSchema = Type.Object({
  holdId: Type.String(),
  refunded: Type.Boolean(),
});
export type AnswerDeliveredResponse = Static<typeof AnswerDeliveredResponseSchema>;

/** `GET /holds/{id}` (worker only): whether a redelivered job may still run its model. */
export const HoldStatusResponseSchema = Type.Object({
  holdId: Type.String(),
  status: StringEnum(['pending', 'settled', 'voided', 'expired'] as const),
});
export type HoldStatusResponse = Static<typeof HoldStatusResponseSchema>;

/** What edge and the worker need of a catalog entry (prices stay in billing). */
export const CatalogEntrySchema = Type.Object({
  id: Type.String(),
  kind: StringEnum(MODEL_KINDS),
  provider: StringEnum(MODEL_PROVIDERS),
  protocol: StringEnum(NODE_PROTOCOLS),
  upstreamModel: Type.String(),
  maxOutputTokens: Type.Integer({ minimum: 1 }),
  /** `weight` 1 when omitted. */
  nodes: Type.Array(
    Type.Object({ url: Type.String(), weight: Type.Optional(Type.Number({ minimum: 0 })) }),
  ),
  updatedAt: IsoDate,
});
export type CatalogEntry = Static<typeof CatalogEntrySchema>;

export const CatalogListResponseSchema = Type.Object({ models: Type.Array(CatalogEntrySchema) });
export type CatalogListResponse = Static<typeof CatalogListResponseSchema>;

/**
 * `GET /accounts/{id}/balance`: the public balance as `GET /v1/user/balance` answers it
 * (decisions §3), passed through by edge, hence its snake_case keys, DZD numbers and the name
 * edge's OpenAPI document gives it.
 */
export const BalanceResponseSchema = Type.Object(
  {
    balance_dzd: Type.Number({ description: 'Posted balance.' }),
    reserved_dzd: Type.Number({ description: 'Held for requests in progress.' }),
    available_dzd: Type.Number({ description: 'Balance minus reserved.' }),
    currency: Type.Literal('DZD'),
  },
  { $id: 'Balance' },
);
export type BalanceResponse = Static<typeof BalanceResponseSchema>;

/**
 * `POST /accounts/{id}/scoped-tokens` (201): the new token, shown once; as `POST /v1/scoped-jwt`
 * answers it (passed through by edge).
 */
export const ScopedTokenCreatedSchema = Type.Object(
  { token: Type.String({ pattern: '^jwt:' }) },
  { $id: 'ScopedToken' },
);
export type ScopedTokenCreated = Static<typeof ScopedTokenCreatedSchema>;

/**
 * `POST /accounts/{id}/scoped-tokens/inspect` and `.../revoke`: a scoped token as
 * `GET /v1/scoped-jwt` (spec fields, plus decisions §3's) and `DELETE /v1/scoped-jwt` answer it,
 * passed through by edge, hence its snake_case keys and DZD numbers.
 */
export const ScopedTokenInspectionSchema = Type.Object(
  {
    /** Unix seconds. */
    expires_at: Type.Integer({ minimum: 0 }),
    models: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: any' }),
    /** DZD; null: no limit. */
    spending_limit: Type.Union([Type.Number(), Type.Null()]),
    spent_dzd: Type.Number(),
    /** Limit − spent − reserved by pending requests, never below 0; null: no limit. */
    remaining_dzd: Type.Union([Type.Number(), Type.Null()]),
    revoked: Type.Boolean(),
    expired: Type.Boolean(),
    api_key_name: Type.String(),
  },
  { $id: 'ScopedTokenInspection' },
);
export type ScopedTokenInspection = Static<typeof ScopedTokenInspectionSchema>;

/**
 * `POST /accounts/{id}/scoped-tokens/inspect` and `.../revoke`: the token itself, in a body
 * (never in a URL: URLs end up in logs).
 */
export const ScopedTokenRefSchema = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 131_072 }),
});
export type ScopedTokenRef = Static<typeof ScopedTokenRefSchema>;

/** A response stored for an Idempotency-Key, replayed byte for byte. */
export const StoredResponseSchema = Type.Object(
  {
    status: Type.Integer({ minimum: 200, maximum: 599 }),
    contentType: Type.String({ minLength: 1, maxLength: 256 }),
    body: Type.String(),
    encoding: StringEnum(['utf8', 'base64'] as const),
  },
  { additionalProperties: false },
);
export type StoredResponse = Static<typeof StoredResponseSchema>;

/**
 * An Idempotency-Key of an account with the hash of its request (`POST /idempotency/release`'s
 * body; the other idempotency bodies add to it).
 */
export const IdempotencyRefSchema = Type.Object(
  {
    accountId: Type.String({ minLength: 1, maxLength: 64 }),
    // Printable ASCII, as edge accepts in the header.
    key: Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' }),
    requestHash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);
export type IdempotencyRef = Static<typeof IdempotencyRefSchema>;

/**
 * `POST /idempotency/claim` (edge only): the key claimed for `leaseMs`. `holdId`: the hold the
 * request will place; a claim left in progress past its lease with that hold settled is refunded.
 */
export const IdempotencyClaimRequestSchema = Type.Object(
  {
    ...IdempotencyRefSchema.properties,
    leaseMs: Type.Integer({ minimum: 1, maximum: 86_400_000 }),
    holdId: Type.Optional(HoldIdSchema),
  },
  { additionalProperties: false },
);
export type IdempotencyClaimRequest = Static<typeof IdempotencyClaimRequestSchema>;

/** The claim's outcome: the key is the caller's now, or the stored answer to replay. */
export const IdempotencyClaimSchema = Type.Union([
  Type.Object({ outcome: Type.Literal('claimed') }),
  Type.Object({ outcome: Type.Literal('replay'), response: StoredResponseSchema }),
]);
export type IdempotencyClaim = Static<typeof IdempotencyClaimSchema>;

/** `POST /idempotency/complete` (edge only): the answer stored for the claimed key (204). */
export const IdempotencyCompleteRequestSchema = Type.Object(
  { ...IdempotencyRefSchema.properties, response: StoredResponseSchema },
  { additionalProperties: false },
);
export type IdempotencyCompleteRequest = Static<typeof IdempotencyCompleteRequestSchema>;

/** What a worker last observed of its model nodes (bounded batch). */
export const NODE_HEALTH_BATCH_MAX = 200;
export const NodeHealthReportSchema = Type.Object(
  {
    workerId: Type.String({ minLength: 1, maxLength: 128 }),
    nodes: Type.Array(
      Type.Object(
        {
          /** Without userinfo, query or fragment (the worker strips them). */
          url: Type.String({ minLength: 1, maxLength: 2048 }),
          healthy: Type.Boolean(),
          observedAtMs: Type.Integer({ minimum: 0 }),
          lastErrorKind: Type.Optional(StringEnum(NODE_HEALTH_ERROR_KINDS)),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: NODE_HEALTH_BATCH_MAX },
    ),
  },
  { additionalProperties: false },
);
export type NodeHealthReport = Static<typeof NodeHealthReportSchema>;

/** The report's answer: how many node observations were recorded. */
export const NodeHealthAcceptedSchema = Type.Object({ accepted: Count });
export type NodeHealthAccepted = Static<typeof NodeHealthAcceptedSchema>;
export type NodeHealthErrorKind = (typeof NODE_HEALTH_ERROR_KINDS)[number];

/**
 * A node URL as it may be stored and shown: without userinfo, query or fragment (they may carry
 * credentials). The worker strips them before reporting; billing again before showing.
 */
export function publicNodeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/+$/, '');
  } catch {
    return '(invalid url)';
  }
}

/*
 * Batches. Edge and the worker send whatever calls queued while their previous call to billing
 * was in flight as one batch (natural batching: nothing waits on a timer, an idle caller sends
 * batches of one). Billing answers each item with exactly what the single route would have
 * answered — its status, the headers that carry data (`X-RateLimit-*`, `Retry-After`) and its
 * body — so one item refused never fails its neighbours. A batch call is idempotent because
 * every item is (hold ids). Each item names the request it is for (`requestId`; an admission's
 * is already in its body), since one call carries the items of many requests.
 */

/** A request schema nested in a batch: the same fields, without the `$id` Ajv registers once. */
const withoutId = <P extends TProperties>(schema: TObject<P>): TObject<P> =>
  Type.Object(schema.properties, { additionalProperties: false });

/** The request an item is for (its `X-Request-Id`): billing logs the item under it. */
const RequestId = Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' }));

/** Items per batch call: an admission batch runs in one database transaction. */
export const MAX_ADMISSION_BATCH = 32;
/** Settlements and voids per batch call (billing applies settlements 64 to a statement). */
export const MAX_HOLD_END_BATCH = 64;

/** One item's answer: what its single route would have sent. */
export const BatchItemAnswerSchema = Type.Object({
  status: Type.Integer({ minimum: 200, maximum: 599 }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  body: Type.Unknown(),
});
export type BatchItemAnswer = Static<typeof BatchItemAnswerSchema>;

/** Every batch route's answer: one item answer per request item, in the request's order. */
export const BatchAnswerSchema = Type.Object({ answers: Type.Array(BatchItemAnswerSchema) });
export type BatchAnswer = Static<typeof BatchAnswerSchema>;

/**
 * `POST /admissions/batch` (edge only): admissions in one database transaction, taken in account
 * order so that concurrent batches lock rows in one order; items of one account keep theirs.
 */
export const AdmissionBatchRequestSchema = Type.Object(
  {
    items: Type.Array(withoutId(AdmissionRequestSchema), {
      minItems: 1,
      maxItems: MAX_ADMISSION_BATCH,
    }),
  },
  { $id: 'BillingAdmissionBatchRequest', additionalProperties: false },
);
export type AdmissionBatchRequest = Static<typeof AdmissionBatchRequestSchema>;

/** `POST /holds/settlements` (worker only): settlements; each item answers as `…/settle`. */
export const SettleBatchRequestSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        { holdId: HoldIdSchema, requestId: RequestId, usage: withoutId(SettleRequestSchema) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_HOLD_END_BATCH },
    ),
  },
  { $id: 'BillingSettleBatchRequest', additionalProperties: false },
);
export type SettleBatchRequest = Static<typeof SettleBatchRequestSchema>;

/** `POST /holds/voids` (edge and worker): voids; each item answers as `…/void`. */
export const VoidBatchRequestSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          holdId: HoldIdSchema,
          requestId: RequestId,
          usage: Type.Optional(withoutId(VoidRequestSchema)),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_HOLD_END_BATCH },
    ),
  },
  { $id: 'BillingVoidBatchRequest', additionalProperties: false },
);
export type VoidBatchRequest = Static<typeof VoidBatchRequestSchema>;
