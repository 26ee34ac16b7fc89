import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

/*
 * The public API's answers that edge builds (in the OpenAI SDKs' shapes, plus `_service`). Each
 * is the answer of its route in `PUBLIC_ROUTES`: the OpenAPI document describes it and the
 * public routes' agreement test checks edge's real answers against it. Answers billing builds
 * and edge passes through are billing's contracts (`UsageList`, `Balance`, `ScopedToken`, …).
 */

const Dzd = (description: string) => Type.Number({ description });

export const ServiceBlockSchema = Type.Object(
  {
    cost_dzd: Type.Optional(
      Dzd(
        'Cost of the request in DZD (up to 6 decimals): settled, or what the pending settlement ' +
          'will charge; absent only when the worker reported no cost.',
      ),
    ),
    balance_dzd: Type.Optional(
      Dzd('Account balance after settlement, in DZD; absent while the settlement is pending.'),
    ),
    hold_id: Type.String({
      description: 'The hold (= the job id): `GET /v1/requests/{hold_id}` answers the receipt.',
    }),
    settlement: Type.Optional(
      StringEnum(['pending'] as const, {
        description:
          'Present when billing could not be reached: the settlement is queued and applied once ' +
          'it is back (the cost is already exact).',
      }),
    ),
    warnings: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Parameters the external provider dropped, sorted; absent when none.',
      }),
    ),
  },
  { $id: 'ServiceBlock' },
);
/** `_service` of an answer: what billing charged for it. */
export type ServiceBlock = Static<typeof ServiceBlockSchema>;

const Usage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

export const ChatCompletionSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer({ description: 'Unix seconds.' }),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({ role: Type.String(), content: Type.String() }),
        finish_reason: Type.String({ description: '`stop`, `length`, ...' }),
      }),
    ),
    usage: Usage,
    _service: Type.Ref('ServiceBlock'),
  },
  { $id: 'ChatCompletion' },
);

export const ChatCompletionChunkSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion.chunk'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(Type.Object({}, { additionalProperties: true })),
    usage: Type.Optional(
      Type.Object({
        prompt_tokens: Type.Integer(),
        completion_tokens: Type.Integer(),
        total_tokens: Type.Integer(),
        cost_dzd: Type.Optional(
          Dzd(
            'The final chunk: the settled cost in DZD (what the queued settlement will charge ' +
              'when `settlement` is `pending`); absent when the worker reported none.',
          ),
        ),
        settlement: Type.Optional(
          StringEnum(['pending'] as const, {
            description: 'Billing was unreachable: the settlement is queued (cost already exact).',
          }),
        ),
      }),
    ),
  },
  {
    $id: 'ChatCompletionChunk',
    description:
      'One `data:` event of a stream. The last chunk has `choices: []` and `usage`; then ' +
      '`data: [DONE]`. An error after the stream started is one `data: {"error": {...}}` event.',
  },
);

export const NativeInferenceResultSchema = Type.Object(
  {
    id: Type.String({ description: '`inf-...`' }),
    model: Type.String(),
    results: Type.Optional(Type.Array(Type.Object({ generated_text: Type.String() }))),
    embeddings: Type.Optional(Type.Array(Type.Array(Type.Number()))),
    num_input_tokens: Type.Integer(),
    num_tokens: Type.Integer(),
    inference_status: Type.Object({
      status: Type.Literal('succeeded'),
      runtime_ms: Type.Integer(),
      cost: Type.Number(),
      tokens_input: Type.Integer(),
      tokens_generated: Type.Integer(),
    }),
    _service: Type.Ref('ServiceBlock'),
  },
  { $id: 'NativeInferenceResult', description: 'Synchronous answer (no `webhook`).' },
);

export const NativeInferenceAckSchema = Type.Object(
  {
    id: Type.String({ description: '`inf-...`' }),
    model: Type.String(),
    inference_status: Type.Object({ status: Type.Literal('queued') }),
    _service: Type.Object({
      reserved_dzd: Dzd('The hold placed for the worst case.'),
      status: Type.Literal('pending_settlement'),
      hold_id: Type.String({ description: "The hold (= the job id), the receipt's key." }),
    }),
  },
  { $id: 'NativeInferenceAck', description: 'Acknowledgement of an asynchronous request.' },
);

export const ModelSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('model'),
    created: Type.Integer(),
    owned_by: Type.String(),
  },
  { $id: 'Model' },
);

export const ModelListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(Type.Ref('Model')) },
  { $id: 'ModelList' },
);

/** OpenAI / Cohere shaped answers of the other routes: the node's JSON plus `_service`. */
export const MediaResultSchema = Type.Object(
  { model: Type.String(), _service: Type.Ref('ServiceBlock') },
  { $id: 'MediaResult', additionalProperties: true },
);

const ResponsesUsage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
  cost_dzd: Type.Optional(Dzd('Streams only (`response.completed`): the settled cost in DZD.')),
});

/** The reference's response object, as far as edge fills it (decisions: the Responses API). */
export const ResponseObjectSchema = Type.Object(
  {
    id: Type.String({ description: '`resp_…`; also the job and hold id (its receipt).' }),
    object: Type.Literal('response'),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    status: StringEnum([
      'queued',
      'in_progress',
      'completed',
      'incomplete',
      'failed',
      'cancelled',
    ] as const),
    background: Type.Boolean({
      description:
        'Run as a job: `queued` at once, `in_progress` while it runs, then its result or ' +
        '`cancelled`; `failed` with the error `response_lost` if the gateway lost it.',
    }),
    incomplete_details: Type.Union([Type.Object({ reason: Type.String() }), Type.Null()]),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    model: Type.String(),
    output: Type.Array(
      Type.Object(
        { id: Type.String(), type: StringEnum(['message', 'function_call'] as const) },
        {
          additionalProperties: true,
          description:
            'An assistant `message` (`output_text` parts with `annotations: []`) or a ' +
            '`function_call` (`call_id`, `name`, `arguments`).',
        },
      ),
    ),
    previous_response_id: Type.Union([Type.String(), Type.Null()]),
    store: Type.Boolean({ description: 'Whether it was stored (for later turns and reads).' }),
    usage: Type.Union([ResponsesUsage, Type.Null()]),
    _service: Type.Optional(Type.Ref('ServiceBlock')),
  },
  {
    $id: 'Response',
    additionalProperties: true,
    description: 'Settings of the request are echoed with the reference defaults.',
  },
);

export const ResponseStreamEventSchema = Type.Object(
  {
    type: StringEnum([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
      'response.incomplete',
      'response.failed',
      'error',
    ] as const),
    sequence_number: Type.Integer({ minimum: 0, description: '0, 1, 2, … in order.' }),
  },
  {
    $id: 'ResponseStreamEvent',
    additionalProperties: true,
    description:
      'One `event: <type>` / `data: <json>` pair. The stream ends after `response.completed`, ' +
      '`response.incomplete` or `response.failed` (no `[DONE]`).',
  },
);

export const ResponseInputItemListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }),
    ),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
    has_more: Type.Boolean(),
  },
  { $id: 'ResponseInputItemList' },
);

export const ResponseDeletedSchema = Type.Object(
  { id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) },
  { $id: 'ResponseDeleted' },
);

/**
 * The answers that other answers name by `$ref` (`_service`, a list's model): a validator of
 * those needs these known to Ajv first.
 */
export const PUBLIC_REFERENCED_SCHEMAS = [ServiceBlockSchema, ModelSchema];
