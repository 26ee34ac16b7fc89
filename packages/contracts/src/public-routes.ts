import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  BalanceResponseSchema,
  ScopedTokenCreatedSchema,
  ScopedTokenInspectionSchema,
} from './billing-api.js';
import { KeyInfoSchema } from './budgets-api.js';
import { RECEIPT_ID_PATTERN, ReceiptSchema } from './receipts-api.js';
import { RESPONSE_ID_PATTERN } from './responses-state-api.js';
import type { Route } from './routes.js';
import { StringEnum } from './schemas/common.js';
import { ChatCompletionRequestSchema } from './schemas/chat-completion.js';
import { LIMITS } from './schemas/limits.js';
import {
  EmbeddingsRequestSchema,
  ImagesRequestSchema,
  RerankRequestSchema,
  SpeechRequestSchema,
  TranscriptionRequestSchema,
  VideoRequestSchema,
} from './schemas/media-requests.js';
import { NativeInferenceRequestSchema } from './schemas/native-inference.js';
import {
  ChatCompletionChunkSchema,
  ChatCompletionSchema,
  MediaResultSchema,
  ModelListSchema,
  ModelSchema,
  NativeInferenceAckSchema,
  NativeInferenceResultSchema,
  ResponseDeletedSchema,
  ResponseInputItemListSchema,
  ResponseObjectSchema,
  ResponseStreamEventSchema,
  PUBLIC_REFERENCED_SCHEMAS,
} from './schemas/public-answers.js';
import { ResponsesRequestSchema } from './schemas/responses-request.js';
import { ScopedTokenCreateRequestSchema } from './schemas/scoped-token.js';
import { USAGE_GROUP_BY, UsageListSchema } from './usage-api.js';

/*
 * The public API (`/v1`), declared once (ADR 0069): edge mounts each route on its method and
 * path and answers 405 with the methods declared for a path, the OpenAPI document is generated
 * from this table, and the public routes' agreement test calls every route on the real stack
 * and checks each answer (and each streamed event) against the schema here. The routes' callers
 * are the OpenAI SDKs and their kin, in the shapes they expect: a route here says what the
 * shared `Route` cannot (query parameters, `Idempotency-Key`, streams, uploads, bytes).
 */

export const PUBLIC_API_PREFIX = '/v1';

/** The error statuses a public route answers, each in the one error shape. */
export type PublicErrorStatus =
  400 | 401 | 402 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 503;

export interface PublicRoute extends Route {
  /** Its errors (an inference route's include 402, 413, 415). */
  readonly errors: readonly PublicErrorStatus[];
  /** Who may call it: any credential (absent), an API key only, or anyone. */
  readonly credential?: 'api_key' | 'none';
  /** It takes `Idempotency-Key`: a retry replays the first answer and charges once. */
  readonly idempotent?: true;
  /** The query parameters it reads (every one optional unless `required`). */
  readonly query?: TObject;
  /** A path parameter's schema where it is more than a string (a pattern, a description). */
  readonly params?: Readonly<Record<string, TSchema>>;
  /** With `stream: true`, the answer is server-sent events, each `data:` one of these. */
  readonly events?: TSchema;
  /** Answers in another media type than JSON: the type and its schema. */
  readonly media?: Readonly<Record<string, TSchema>>;
  /** A multipart upload instead of a JSON body: its text fields, and its file part's name. */
  readonly upload?: { readonly fields: TObject; readonly file: string };
}

/** A table of public routes by name, kept literal like `defineRoutes`'s. */
function definePublicRoutes<const Routes extends Record<string, PublicRoute>>(
  routes: Routes,
): Routes {
  return routes;
}

const INFERENCE_ERRORS = [400, 401, 402, 403, 404, 405, 409, 413, 415, 429, 500, 503] as const;
const READ_ERRORS = [401, 403, 404, 405, 429, 500, 503] as const;
const QUERY_READ_ERRORS = [400, ...READ_ERRORS] as const;

const MODEL_ID = Type.String({
  description: 'Catalog model id; it contains `/`, which is sent as is (not percent-encoded).',
});
const RESPONSE_ID = Type.String({ pattern: RESPONSE_ID_PATTERN });
const TOKEN_QUERY = Type.Object(
  {
    jwt: Type.String({ description: 'The scoped token (`jwt:…`); required unless `jwtoken`.' }),
    jwtoken: Type.Optional(Type.String({ description: 'Alias of `jwt`.' })),
  },
  { additionalProperties: false },
);
const USAGE_DAY = Type.String({
  description:
    'RFC 3339 time with a zone, or YYYY-MM-DD (midnight UTC). Default: to = now, from = to − ' +
    '30 days; from < to, at most 366 days apart.',
});

/** POST of an inference route: a JSON body, idempotent, billed. */
const inference = <Body extends TSchema, Answer extends TSchema>(
  path: string,
  summary: string,
  body: Body,
  answer: Answer,
) =>
  ({
    method: 'POST',
    path,
    summary,
    body,
    answer,
    idempotent: true,
    errors: INFERENCE_ERRORS,
  }) as const;

export const PUBLIC_ROUTES = definePublicRoutes({
  chatCompletions: {
    ...inference(
      '/chat/completions',
      'Chat completion (JSON, or SSE with stream: true)',
      ChatCompletionRequestSchema,
      ChatCompletionSchema,
    ),
    events: ChatCompletionChunkSchema,
  },
  createResponse: {
    ...inference(
      '/responses',
      'Responses API: a response (JSON, or SSE events with stream: true), stored by default; ' +
        'with background: true, answered at once as queued',
      ResponsesRequestSchema,
      ResponseObjectSchema,
    ),
    events: ResponseStreamEventSchema,
  },
  getResponse: {
    method: 'GET',
    path: '/responses/:response_id',
    summary: 'A stored response (free; 404 for unknown, deleted, expired or not yours)',
    params: { response_id: RESPONSE_ID },
    answer: ResponseObjectSchema,
    errors: READ_ERRORS,
  },
  deleteResponse: {
    method: 'DELETE',
    path: '/responses/:response_id',
    summary: 'Deletes a stored response: its content is removed from the database',
    params: { response_id: RESPONSE_ID },
    answer: ResponseDeletedSchema,
    errors: READ_ERRORS,
  },
  cancelResponse: {
    method: 'POST',
    path: '/responses/:response_id/cancel',
    summary:
      'Cancels a background response: its job stops and is billed for what it produced; ' +
      'one that ended already is answered as it is (free)',
    params: { response_id: RESPONSE_ID },
    answer: ResponseObjectSchema,
    errors: QUERY_READ_ERRORS,
  },
  responseInputItems: {
    method: 'GET',
    path: '/responses/:response_id/input_items',
    summary: "A stored response's own input items (references resolved), paged",
    params: { response_id: RESPONSE_ID },
    query: Type.Object(
      {
        limit: Type.Optional(
          Type.Integer({ minimum: 1, maximum: LIMITS.responseInputItemsPageMax, default: 20 }),
        ),
        order: Type.Optional(StringEnum(['asc', 'desc'] as const, { default: 'desc' })),
        after: Type.Optional(Type.String({ description: 'An item id.' })),
      },
      { additionalProperties: false },
    ),
    answer: ResponseInputItemListSchema,
    errors: QUERY_READ_ERRORS,
  },
  nativeInference: {
    ...inference(
      '/inference/*model',
      'Native inference: synchronous, or acknowledged at once with `webhook`',
      NativeInferenceRequestSchema,
      Type.Union([NativeInferenceResultSchema, NativeInferenceAckSchema], {
        description: 'Result (sync) or acknowledgement (webhook)',
      }),
    ),
    params: { model: MODEL_ID },
  },
  embeddings: inference(
    '/embeddings',
    'Embeddings (OpenAI shape)',
    EmbeddingsRequestSchema,
    MediaResultSchema,
  ),
  images: inference(
    '/images/generations',
    'Image generation',
    ImagesRequestSchema,
    MediaResultSchema,
  ),
  speech: {
    method: 'POST',
    path: '/audio/speech',
    summary: 'Text to speech: the audio bytes (the cost in `X-Service-*` headers)',
    body: SpeechRequestSchema,
    media: { 'audio/*': Type.String({ contentMediaType: 'audio/*' }) },
    idempotent: true,
    errors: INFERENCE_ERRORS,
  },
  transcriptions: {
    method: 'POST',
    path: '/audio/transcriptions',
    summary: 'Speech to text (multipart upload, size-limited)',
    upload: { fields: TranscriptionRequestSchema, file: 'file' },
    answer: MediaResultSchema,
    media: { 'text/plain': Type.String() },
    idempotent: true,
    errors: INFERENCE_ERRORS,
  },
  video: inference('/video/generations', 'Video generation', VideoRequestSchema, MediaResultSchema),
  rerank: inference('/rerank', 'Rerank (Cohere shape)', RerankRequestSchema, MediaResultSchema),
  createScopedToken: {
    method: 'POST',
    path: '/scoped-jwt',
    summary: 'Create a scoped token (API key only)',
    body: ScopedTokenCreateRequestSchema,
    answer: ScopedTokenCreatedSchema,
    credential: 'api_key',
    idempotent: true,
    errors: [400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 503],
  },
  inspectScopedToken: {
    method: 'GET',
    path: '/scoped-jwt',
    summary: 'Inspect a scoped token (API key only)',
    query: TOKEN_QUERY,
    answer: ScopedTokenInspectionSchema,
    credential: 'api_key',
    errors: QUERY_READ_ERRORS,
  },
  revokeScopedToken: {
    method: 'DELETE',
    path: '/scoped-jwt',
    summary: 'Revoke a scoped token (API key of its signer)',
    query: TOKEN_QUERY,
    answer: ScopedTokenInspectionSchema,
    credential: 'api_key',
    errors: QUERY_READ_ERRORS,
  },
  balance: {
    method: 'GET',
    path: '/user/balance',
    summary: 'Account balance in DZD',
    answer: BalanceResponseSchema,
    errors: READ_ERRORS,
  },
  key: {
    method: 'GET',
    path: '/key',
    summary:
      "The calling key or token: its budgets (spent, reserved, remaining, resets_at), a token's " +
      "spending limit and spend, the account's rate limit. Not counted against the rate limit.",
    answer: KeyInfoSchema,
    errors: READ_ERRORS,
  },
  usage: {
    method: 'GET',
    path: '/usage',
    summary: 'Usage of the account over [from, to), grouped (API key only)',
    query: Type.Object(
      {
        from: Type.Optional(USAGE_DAY),
        to: Type.Optional(USAGE_DAY),
        group_by: Type.Optional(StringEnum(USAGE_GROUP_BY, { default: 'day' })),
      },
      { additionalProperties: false },
    ),
    answer: UsageListSchema,
    credential: 'api_key',
    errors: QUERY_READ_ERRORS,
  },
  receipt: {
    method: 'GET',
    path: '/requests/:request_id',
    summary:
      "One request's receipt: tokens by kind, prices at admission, hold, settled cost, refunds, " +
      'ledger ids, timings (API key only; by X-Request-Id or job id; 404 for unknown ids and ' +
      "other accounts')",
    params: {
      request_id: Type.String({
        pattern: RECEIPT_ID_PATTERN,
        description: 'The `X-Request-Id` of the request, or its job id (`chatcmpl-…`, `resp_…`).',
      }),
    },
    answer: ReceiptSchema,
    credential: 'api_key',
    errors: READ_ERRORS,
  },
  models: {
    method: 'GET',
    path: '/models',
    summary: 'Models (OpenAI list shape)',
    answer: ModelListSchema,
    errors: READ_ERRORS,
  },
  model: {
    method: 'GET',
    path: '/models/*model',
    summary: 'One model',
    params: { model: MODEL_ID },
    answer: ModelSchema,
    errors: READ_ERRORS,
  },
  openApi: {
    method: 'GET',
    path: '/openapi.json',
    summary: 'This document (OpenAPI 3.1)',
    answer: Type.Object(
      { openapi: Type.Literal('3.1.0'), paths: Type.Object({}, { additionalProperties: true }) },
      { additionalProperties: true },
    ),
    credential: 'none',
    errors: [405],
  },
});

/** The methods the public API declares at `path` (what a 405 there names as allowed). */
export function publicMethodsAt(path: string): Route['method'][] {
  return publicRoutes()
    .filter((route) => route.path === path)
    .map((route) => route.method);
}

const publicRoutes = (): PublicRoute[] => Object.values(PUBLIC_ROUTES);

/** The request bodies of the public API (JSON bodies and an upload's fields), each once. */
export function publicRequestSchemas(): TSchema[] {
  return uniqueById(
    publicRoutes().flatMap((route) => [route.body, route.upload?.fields].filter(isSchema)),
  );
}

/** The named answers and events of the public API, and what they name by `$ref`, each once. */
export function publicAnswerSchemas(): TSchema[] {
  const answers = publicRoutes().flatMap((route) => [
    ...namedMembers(route.answer),
    ...namedMembers(route.events),
  ]);
  return uniqueById([...PUBLIC_REFERENCED_SCHEMAS, ...answers]);
}

/** The schema if it has a name (`$id`), or the named members of a union. */
function namedMembers(schema: TSchema | undefined): TSchema[] {
  if (schema === undefined) return [];
  if (schema.$id !== undefined) return [schema];
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  return (members ?? []).filter((member) => member.$id !== undefined);
}

const isSchema = (schema: TSchema | undefined): schema is TSchema => schema !== undefined;

const uniqueById = (schemas: TSchema[]): TSchema[] => [
  ...new Map(schemas.map((schema) => [schema.$id, schema])).values(),
];
