/*
 * `POST /v1/responses`: the reference Responses API request, as far as the gateway serves it.
 * Edge translates it to a chat completion request (so every chat rule, the external provider's
 * allowlist and the hold's token count apply unchanged) and the answer back. The schema bounds
 * and types the top level; items and their parts are checked during the translation, which names
 * the offending `input[i]…` path. Fields outside this schema are refused (400 naming the field):
 * unlike chat, no client sends the Responses API fields we do not know to a model.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { REASONING_EFFORTS, SERVICE_TIERS, VERBOSITIES } from './chat-completion.js';
import { OpenObject, StringEnum } from './common.js';
import { LIMITS } from './limits.js';

const RESPONSE_ID = '^resp_[0-9a-f]{32}$';

export const ResponsesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: LIMITS.modelIdMaxLength }),
    input: Type.Optional(
      Type.Union([
        Type.String({ maxLength: LIMITS.textMaxLength }),
        Type.Array(OpenObject({ description: 'An input item (message, function call, ...).' }), {
          maxItems: LIMITS.responseInputItemsMaxItems,
        }),
      ]),
    ),
    instructions: Type.Optional(
      Type.String({
        maxLength: LIMITS.textMaxLength,
        description: 'A system message before the input; not carried to later responses.',
      }),
    ),
    previous_response_id: Type.Optional(
      Type.String({ pattern: RESPONSE_ID, description: 'Continue a stored response.' }),
    ),
    store: Type.Optional(Type.Boolean({ default: true })),
    stream: Type.Optional(Type.Boolean({ default: false })),
    background: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Run it as a job: answered at once with status `queued`; `GET` shows `in_progress`, ' +
          'then the result; `POST /v1/responses/{id}/cancel` stops it. Needs `store` and no `stream`.',
      }),
    ),
    webhook: Type.Optional(
      Type.String({
        format: 'http-url',
        maxLength: LIMITS.urlMaxLength,
        description:
          'With `background`: a signed `response.completed` (`.incomplete`, `.failed`, ' +
          '`.cancelled`) event is POSTed here when it ends, as job webhooks are signed. The ' +
          'edge requires https and a public address unless a development setting allows otherwise.',
      }),
    ),
    tools: Type.Optional(Type.Array(OpenObject(), { maxItems: LIMITS.toolsMaxItems })),
    tool_choice: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), OpenObject()])),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    text: Type.Optional(
      Type.Object(
        {
          format: Type.Optional(
            OpenObject({ description: '`text`, `json_object`, `json_schema`.' }),
          ),
          verbosity: Type.Optional(StringEnum(VERBOSITIES)),
        },
        { additionalProperties: false },
      ),
    ),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.tokensMax })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    reasoning: Type.Optional(
      Type.Object(
        {
          effort: Type.Optional(StringEnum(REASONING_EFFORTS)),
          summary: Type.Optional(
            StringEnum(['auto', 'concise', 'detailed'] as const, {
              description: 'Accepted; nodes return no reasoning summaries.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    metadata: Type.Optional(
      Type.Record(
        Type.String({ maxLength: LIMITS.metadataKeyMaxLength }),
        Type.String({ maxLength: LIMITS.metadataValueMaxLength }),
        { maxProperties: LIMITS.metadataMaxEntries, description: 'Kept with the response.' },
      ),
    ),
    include: Type.Optional(
      Type.Array(Type.String({ maxLength: 128 }), {
        maxItems: 16,
        description: 'Accepted; nothing the gateway could add is left out by default.',
      }),
    ),
    truncation: Type.Optional(
      StringEnum(['disabled', 'auto'] as const, {
        description: 'The gateway never truncates; `auto` behaves as `disabled`.',
      }),
    ),
    service_tier: Type.Optional(StringEnum(SERVICE_TIERS)),
    user: Type.Optional(Type.String({ maxLength: LIMITS.userMaxLength })),
    safety_identifier: Type.Optional(Type.String({ maxLength: LIMITS.userMaxLength })),
    prompt_cache_key: Type.Optional(Type.String({ maxLength: LIMITS.userMaxLength })),
    stream_options: Type.Optional(OpenObject({ description: 'Accepted and ignored.' })),
  },
  {
    $id: 'ResponsesRequest',
    additionalProperties: false,
    description: 'Responses API request (translated to a chat completion).',
  },
);

export type ResponsesRequest = Static<typeof ResponsesRequestSchema>;
