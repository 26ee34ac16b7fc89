import {
  LIMITS,
  RECEIPT_ID_PATTERN,
  RESPONSE_ID_PATTERN,
  USAGE_GROUP_BY,
} from '@gateway/contracts';
import { TranscriptionRequestSchema } from '../schemas/media.js';
import { errors, json, ok, ref, toComponent } from './components.js';

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Same key + same request within 24 h replays the first answer and charges once; another ' +
    'request under the key is 409. A stream cannot be replayed: a retry of one is 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const RESPONSE_ID = {
  name: 'response_id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: RESPONSE_ID_PATTERN },
};
const MODEL_IN_PATH = {
  name: 'model',
  in: 'path',
  required: true,
  description: 'Catalog model id; it contains `/`, which is sent as is (not percent-encoded).',
  schema: { type: 'string' },
};
const TOKEN_QUERY = (required: boolean) => [
  { name: 'jwt', in: 'query', required, schema: { type: 'string' } },
  {
    name: 'jwtoken',
    in: 'query',
    required: false,
    description: 'Alias of `jwt`.',
    schema: { type: 'string' },
  },
];

const USAGE_QUERY = [
  ...['from', 'to'].map((name) => ({
    name,
    in: 'query',
    required: false,
    description:
      'RFC 3339 time with a zone, or YYYY-MM-DD (midnight UTC). Default: to = now, from = to − ' +
      '30 days; from < to, at most 366 days apart.',
    schema: { type: 'string' },
  })),
  {
    name: 'group_by',
    in: 'query',
    required: false,
    schema: { type: 'string', enum: [...USAGE_GROUP_BY], default: 'day' },
  },
];

const INFERENCE_ERRORS = errors(400, 401, 402, 403, 404, 405, 409, 413, 415, 429, 500, 503);
const READ_ERRORS = errors(401, 403, 404, 405, 429, 500, 503);

const inference = (summary: string, request: string, answer: Record<string, unknown>) => ({
  post: {
    summary,
    parameters: [IDEMPOTENCY_KEY],
    requestBody: { required: true, content: json(ref(request)) },
    responses: { '200': ok('Result', answer), ...INFERENCE_ERRORS },
  },
});

/** The multipart body: the transcription fields' schema plus the `file` part. */
function transcriptionUpload() {
  const fields = toComponent(TranscriptionRequestSchema) as {
    properties: Record<string, unknown>;
    required: string[];
  };
  return {
    ...fields,
    properties: {
      ...fields.properties,
      file: { type: 'string', contentMediaType: 'application/octet-stream' },
    },
    required: [...fields.required, 'file'],
  };
}

export function publicPaths(): Record<string, unknown> {
  return {
    '/v1/chat/completions': inference(
      'Chat completion (JSON, or SSE with stream: true)',
      'ChatCompletionRequest',
      {
        ...json(ref('ChatCompletion')),
        'text/event-stream': { schema: { type: 'string' }, itemSchema: ref('ChatCompletionChunk') },
      },
    ),
    '/v1/responses': inference(
      'Responses API: a response (JSON, or SSE events with stream: true), stored by default; ' +
        'with background: true, answered at once as queued',
      'ResponsesRequest',
      {
        ...json(ref('Response')),
        'text/event-stream': { schema: { type: 'string' }, itemSchema: ref('ResponseStreamEvent') },
      },
    ),
    '/v1/responses/{response_id}': {
      get: {
        summary: 'A stored response (free; 404 for unknown, deleted, expired or not yours)',
        parameters: [RESPONSE_ID],
        responses: { '200': ok('The response', json(ref('Response'))), ...READ_ERRORS },
      },
      delete: {
        summary: 'Deletes a stored response: its content is removed from the database',
        parameters: [RESPONSE_ID],
        responses: { '200': ok('Deleted', json(ref('ResponseDeleted'))), ...READ_ERRORS },
      },
    },
    '/v1/responses/{response_id}/cancel': {
      post: {
        summary:
          'Cancels a background response: its job stops and is billed for what it produced; ' +
          'one that ended already is answered as it is (free)',
        parameters: [RESPONSE_ID],
        responses: {
          '200': ok('The response, cancelled or as it ended', json(ref('Response'))),
          ...errors(400),
          ...READ_ERRORS,
        },
      },
    },
    '/v1/responses/{response_id}/input_items': {
      get: {
        summary: "A stored response's own input items (references resolved), paged",
        parameters: [
          RESPONSE_ID,
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: {
              type: 'integer',
              minimum: 1,
              maximum: LIMITS.responseInputItemsPageMax,
              default: 20,
            },
          },
          {
            name: 'order',
            in: 'query',
            required: false,
            schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
          },
          {
            name: 'after',
            in: 'query',
            required: false,
            description: 'An item id.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': ok('Items', json(ref('ResponseInputItemList'))),
          ...errors(400),
          ...READ_ERRORS,
        },
      },
    },
    '/v1/inference/{model}': {
      post: {
        summary: 'Native inference: synchronous, or acknowledged at once with `webhook`',
        parameters: [MODEL_IN_PATH, IDEMPOTENCY_KEY],
        requestBody: { required: true, content: json(ref('NativeInferenceRequest')) },
        responses: {
          '200': ok(
            'Result (sync) or acknowledgement (webhook)',
            json({ oneOf: [ref('NativeInferenceResult'), ref('NativeInferenceAck')] }),
          ),
          ...INFERENCE_ERRORS,
        },
      },
    },
    '/v1/embeddings': inference(
      'Embeddings (OpenAI shape)',
      'EmbeddingsRequest',
      json(ref('MediaResult')),
    ),
    '/v1/images/generations': inference(
      'Image generation',
      'ImagesRequest',
      json(ref('MediaResult')),
    ),
    '/v1/audio/speech': inference('Text to speech: the audio bytes', 'SpeechRequest', {
      'audio/*': { schema: { type: 'string', contentMediaType: 'audio/*' } },
    }),
    '/v1/audio/transcriptions': {
      post: {
        summary: 'Speech to text (multipart upload, size-limited)',
        parameters: [IDEMPOTENCY_KEY],
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: transcriptionUpload() } },
        },
        responses: {
          '200': ok('Transcription', {
            ...json(ref('MediaResult')),
            'text/plain': { schema: { type: 'string' } },
          }),
          ...INFERENCE_ERRORS,
        },
      },
    },
    '/v1/video/generations': inference(
      'Video generation',
      'VideoRequest',
      json(ref('MediaResult')),
    ),
    '/v1/rerank': inference('Rerank (Cohere shape)', 'RerankRequest', json(ref('MediaResult'))),
    '/v1/scoped-jwt': {
      post: {
        summary: 'Create a scoped token (API key only)',
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, content: json(ref('ScopedTokenCreateRequest')) },
        responses: {
          '200': ok('The token', json(ref('ScopedToken'))),
          ...errors(400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 503),
        },
      },
      get: {
        summary: 'Inspect a scoped token (API key only)',
        parameters: TOKEN_QUERY(true),
        responses: {
          '200': ok('The token', json(ref('ScopedTokenInspection'))),
          ...errors(400),
          ...READ_ERRORS,
        },
      },
      delete: {
        summary: 'Revoke a scoped token (API key of its signer)',
        parameters: TOKEN_QUERY(true),
        responses: {
          '200': ok('The revoked token', json(ref('ScopedTokenInspection'))),
          ...errors(400),
          ...READ_ERRORS,
        },
      },
    },
    '/v1/user/balance': {
      get: {
        summary: 'Account balance in DZD',
        responses: { '200': ok('Balance', json(ref('Balance'))), ...READ_ERRORS },
      },
    },
    '/v1/key': {
      get: {
        summary:
          "The calling key or token: its budgets (spent, reserved, remaining, resets_at), a token's " +
          "spending limit and spend, the account's rate limit. Not counted against the rate limit.",
        responses: { '200': ok('The credential', json(ref('KeyInfo'))), ...READ_ERRORS },
      },
    },
    '/v1/usage': {
      get: {
        summary: 'Usage of the account over [from, to), grouped (API key only)',
        parameters: USAGE_QUERY,
        responses: { '200': ok('Usage', json(ref('UsageList'))), ...errors(400), ...READ_ERRORS },
      },
    },
    '/v1/requests/{request_id}': {
      get: {
        summary:
          "One request's receipt: tokens by kind, prices at admission, hold, settled cost, refunds, " +
          'ledger ids, timings (API key only; by X-Request-Id or job id; 404 for unknown ids and ' +
          "other accounts')",
        parameters: [
          {
            name: 'request_id',
            in: 'path',
            required: true,
            description:
              'The `X-Request-Id` of the request, or its job id (`chatcmpl-…`, `resp_…`).',
            schema: { type: 'string', pattern: RECEIPT_ID_PATTERN },
          },
        ],
        responses: { '200': ok('The receipt', json(ref('Receipt'))), ...READ_ERRORS },
      },
    },
    '/v1/models': {
      get: {
        summary: 'Models (OpenAI list shape)',
        responses: { '200': ok('Models', json(ref('ModelList'))), ...READ_ERRORS },
      },
    },
    '/v1/models/{model}': {
      get: {
        summary: 'One model',
        parameters: [MODEL_IN_PATH],
        responses: { '200': ok('Model', json(ref('Model'))), ...READ_ERRORS },
      },
    },
    '/v1/openapi.json': {
      get: {
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } },
      },
    },
  };
}
