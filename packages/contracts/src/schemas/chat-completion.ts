import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { OpenObject, StringEnum } from './common.js';
import { LIMITS } from './limits.js';

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;
export const SERVICE_TIERS = ['auto', 'default', 'priority'] as const;
/** Spec: `max` is not accepted; `none` is not accepted by every model (decided per model later). */
export const REASONING_EFFORTS = ['none', 'low', 'medium', 'high', 'xhigh'] as const;

const TokenCount = (description: string) =>
  Type.Integer({ minimum: 1, maximum: LIMITS.tokensMax, description });

const StopSequence = Type.String({ maxLength: LIMITS.stopSequenceMaxLength });

export const ChatMessageSchema = Type.Object(
  {
    role: StringEnum(CHAT_ROLES),
    content: Type.String({ maxLength: LIMITS.textMaxLength }),
  },
  {
    // Extra message fields (e.g. `name`) pass through; model adapters decide what to forward.
    additionalProperties: true,
    description: 'One conversation turn.',
  },
);

/**
 * `POST /v1/chat/completions`. Unknown top-level fields are allowed: for external-provider models
 * the allowlist drops them with a warning instead of rejecting the request (spec), and default
 * models ignore them. Field order is the order errors are reported in.
 */
export const ChatCompletionRequestSchema = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: LIMITS.modelIdMaxLength,
      description: 'Catalog model identifier, verbatim.',
    }),
    messages: Type.Array(ChatMessageSchema, {
      minItems: 1,
      maxItems: LIMITS.messagesMaxItems,
      description: 'The whole conversation so far; models keep no memory.',
    }),
    max_tokens: Type.Optional(TokenCount('Maximum tokens generated (reasoning included).')),
    max_completion_tokens: Type.Optional(
      TokenCount('Takes precedence over `max_tokens` when both are sent.'),
    ),
    stream: Type.Optional(Type.Boolean({ default: false })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, default: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 1 })),
    stop: Type.Optional(
      Type.Union([StopSequence, Type.Array(StopSequence, { maxItems: LIMITS.stopMaxItems })], {
        description: 'Up to 4 stop sequences.',
      }),
    ),
    n: Type.Optional(
      Type.Integer({ minimum: 1, maximum: LIMITS.nMax, default: 1, description: 'Choices.' }),
    ),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2, default: 0 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2, default: 0 })),
    response_format: Type.Optional(OpenObject({ description: 'JSON mode / structured outputs.' })),
    tools: Type.Optional(Type.Array(OpenObject(), { maxItems: LIMITS.toolsMaxItems })),
    tool_choice: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), OpenObject()])),
    service_tier: Type.Optional(
      StringEnum(SERVICE_TIERS, { description: '`priority` costs 20% more.' }),
    ),
    reasoning_effort: Type.Optional(StringEnum(REASONING_EFFORTS)),
    seed: Type.Optional(
      Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
    ),
    user: Type.Optional(Type.String({ maxLength: LIMITS.userMaxLength })),
    logprobs: Type.Optional(Type.Boolean()),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    webhook: Type.Optional(
      Type.Unknown({ description: 'Accepted and silently ignored on this endpoint (spec).' }),
    ),
  },
  {
    $id: 'ChatCompletionRequest',
    additionalProperties: true,
    description: 'Chat completion request (widely used chat completions schema).',
  },
);

export type ChatMessage = Static<typeof ChatMessageSchema>;
export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>;
