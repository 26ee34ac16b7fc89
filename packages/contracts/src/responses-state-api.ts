import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { OpenObject, StringEnum } from './schemas/common.js';
import { LIMITS } from './schemas/limits.js';

/*
 * Stored Responses state over billing's internal API (edge's calls only). Edge translates
 * `/v1/responses` to chat and back; billing keeps what a later request may need: each stored
 * response's input items and response object (its `output` items included), sealed with the
 * MASTER_KEY keyring, for the retention period. Items are opaque JSON objects to billing except
 * for their `id`, which `item_reference` looks up.
 *
 * Who may read: every call names the account (from edge's authenticated caller) and the reader.
 * A response stored by an API key (`tokenDigest: null`) is read by the account's API keys only;
 * one stored by a scoped token is read by that same token (its SHA-256 digest, which edge
 * computes from the credential) and by the account's API keys. Anything else is the same 404 as
 * an unknown id.
 */

/**
 * The webhook event of a background response's end, as the reference names them: one per end
 * status (a response lost with its edge ends `failed`).
 */
export const RESPONSE_WEBHOOK_TYPES = [
  'response.completed',
  'response.incomplete',
  'response.failed',
  'response.cancelled',
] as const;
export type ResponseWebhookType = (typeof RESPONSE_WEBHOOK_TYPES)[number];

/** What the webhook says: which response ended (read it with `GET /v1/responses/{id}`). */
export const ResponseEndedDataSchema = Type.Object(
  { id: Type.String({ pattern: '^resp_[0-9a-f]{32}$' }) },
  { additionalProperties: false },
);

/** The webhook body, in the Standard Webhooks shape (as account alerts). */
export const ResponseWebhookBodySchema = Type.Object(
  {
    type: StringEnum(RESPONSE_WEBHOOK_TYPES),
    timestamp: Type.String({ format: 'date-time' }),
    data: ResponseEndedDataSchema,
  },
  { $id: 'ResponseWebhookBody' },
);
export type ResponseWebhookBody = Static<typeof ResponseWebhookBodySchema>;

/** `resp_` + 32 hex digits: what edge mints, and all billing stores. */
export const RESPONSE_ID_PATTERN = '^resp_[0-9a-f]{32}$';
/** Item ids edge mints (`msg_`, `fc_`, `fco_`, `rs_` + 32 hex) or a client sent (the SDKs'). */
export const RESPONSE_ITEM_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';
/** A scoped token's SHA-256, hex: who stored a response, or who reads. */
const TOKEN_DIGEST_PATTERN = '^[0-9a-f]{64}$';

const ResponseId = Type.String({ pattern: RESPONSE_ID_PATTERN });
const TokenDigest = Type.Union([Type.String({ pattern: TOKEN_DIGEST_PATTERN }), Type.Null()], {
  description: "The scoped token's SHA-256 (hex); null for an API key.",
});

/** One input or output item as the Responses API shows it; `id` always set by edge. */
const ResponseItemObject = Type.Object(
  {
    id: Type.String({ pattern: RESPONSE_ITEM_ID_PATTERN }),
    type: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: true },
);
/** The schema keeps other fields (`additionalProperties`); the type says so too. */
export type ResponseItemRecord = Static<typeof ResponseItemObject> & Record<string, unknown>;
export const ResponseItemRecordSchema = Type.Unsafe<ResponseItemRecord>(ResponseItemObject);

/** `PUT /internal/v1/accounts/{accountId}/responses/{responseId}`: 204; a second PUT is 409. */
export const SaveResponseRequestSchema = Type.Object(
  {
    tokenDigest: TokenDigest,
    previousResponseId: Type.Union([ResponseId, Type.Null()]),
    /** The request's own input items (not the chain's), in order. */
    inputItems: Type.Array(ResponseItemRecordSchema, {
      maxItems: LIMITS.responseInputItemsMaxItems,
    }),
    /** The response object as answered (its `output` items are what later turns continue). */
    response: OpenObject({ description: 'The Responses API object.' }),
    /**
     * A background response, saved when it is queued: its result replaces it once (`finish`).
     * While it runs, it cannot be continued.
     */
    inProgress: Type.Optional(Type.Boolean()),
    /**
     * A background response's `webhook`: told when it ends (a signed `response.*` event, through
     * billing's outbox and the dispatcher). Only with `inProgress`; kept sealed, with the response.
     */
    webhookUrl: Type.Optional(Type.String({ format: 'http-url', maxLength: 2048 })),
  },
  { $id: 'SaveResponseRequest', additionalProperties: false },
);
export type SaveResponseRequest = Static<typeof SaveResponseRequestSchema>;

/**
 * `GET /internal/v1/accounts/{accountId}/responses/{responseId}?reader=<digest>` (no `reader`:
 * an API key): the stored response, 404 `response_not_found` otherwise.
 */
export const ResponseRecordSchema = Type.Object(
  {
    id: ResponseId,
    previousResponseId: Type.Union([ResponseId, Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.String({ format: 'date-time' }),
    inputItems: Type.Array(ResponseItemRecordSchema),
    response: OpenObject(),
    /**
     * A background response not finished yet. One whose job ended over
     * `BACKGROUND_RESPONSE_LOST_AFTER_MS` ago without its result being saved (the edge running
     * it stopped) reads as finished, `failed`, with the error `response_lost`.
     */
    inProgress: Type.Boolean(),
  },
  { $id: 'ResponseRecord', additionalProperties: false },
);
export type ResponseRecord = Static<typeof ResponseRecordSchema>;

/**
 * How long after its job ended a background response still waits for its result: the edge that
 * ran the job saves it within seconds; past this, that edge is gone.
 */
export const BACKGROUND_RESPONSE_LOST_AFTER_MS = 120_000;

/**
 * `POST /internal/v1/accounts/{accountId}/responses/{responseId}/finish`: a background
 * response's result (completed, incomplete, failed or cancelled) replaces it, once. `finished`
 * false: it was not in progress any more (cancelled or finished first), and nothing changed.
 */
export const FinishResponseRequestSchema = Type.Object(
  {
    reader: TokenDigest,
    response: OpenObject({ description: 'The Responses API object, ended.' }),
  },
  { $id: 'FinishResponseRequest', additionalProperties: false },
);
export type FinishResponseRequest = Static<typeof FinishResponseRequestSchema>;

export const FinishedResponseSchema = Type.Object(
  { finished: Type.Boolean() },
  { $id: 'FinishedResponse', additionalProperties: false },
);
export type FinishedResponse = Static<typeof FinishedResponseSchema>;

/**
 * `POST /internal/v1/accounts/{accountId}/responses/context`: what a new request continues.
 * `history` is the `previous_response_id` chain, oldest first: for each response its input
 * items, then its output items. `items` answers each `itemIds` entry (any stored item the reader
 * may read). An id that is unknown, expired, deleted or not the reader's is 404
 * `response_not_found` naming it; a chain longer than `LIMITS.responseChainMaxDepth` is 400.
 */
export const ResponseContextRequestSchema = Type.Object(
  {
    reader: TokenDigest,
    previousResponseId: Type.Union([ResponseId, Type.Null()]),
    itemIds: Type.Array(Type.String({ pattern: RESPONSE_ITEM_ID_PATTERN }), {
      maxItems: LIMITS.responseItemReferencesMaxItems,
      uniqueItems: true,
    }),
  },
  { $id: 'ResponseContextRequest', additionalProperties: false },
);
export type ResponseContextRequest = Static<typeof ResponseContextRequestSchema>;

export const ResponseContextSchema = Type.Object(
  {
    history: Type.Array(ResponseItemRecordSchema),
    items: Type.Array(ResponseItemRecordSchema, { description: 'In the order of `itemIds`.' }),
  },
  { $id: 'ResponseContext', additionalProperties: false },
);
export type ResponseContext = Static<typeof ResponseContextSchema>;

/** `DELETE /internal/v1/accounts/{accountId}/responses/{responseId}?reader=`: the rows are gone. */
export const DeletedResponseSchema = Type.Object(
  { id: ResponseId, deleted: Type.Literal(true) },
  { $id: 'DeletedResponse', additionalProperties: false },
);
export type DeletedResponse = Static<typeof DeletedResponseSchema>;
