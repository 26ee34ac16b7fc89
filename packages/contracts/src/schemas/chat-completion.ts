/*
 * The chat completion request: its schema, which parameters reach a model node, and what its
 * messages ask beyond the schema (the media kinds admission checks, the rules JSON Schema states
 * poorly).
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { GatewayError } from '../errors.js';
import { ChatMessageSchema, PART_MODALITIES, type ChatMessage } from './chat-messages.js';
import { clipParamName, OpenObject, StringEnum } from './common.js';
import { LIMITS } from './limits.js';

export const SERVICE_TIERS = ['auto', 'default', 'priority'] as const;
/** Spec: `max` is not accepted; `none` is not accepted by every model (decided per model later). */
export const REASONING_EFFORTS = ['none', 'low', 'medium', 'high', 'xhigh'] as const;
export const VERBOSITIES = ['low', 'medium', 'high'] as const;

const TokenCount = (description: string) =>
  Type.Integer({ minimum: 1, maximum: LIMITS.tokensMax, description });

const StopSequence = Type.String({ maxLength: LIMITS.stopSequenceMaxLength });

/**
 * `POST /v1/chat/completions`. Unknown top-level fields pass the schema: for external-provider
 * models the allowlist drops them with a warning instead of rejecting the request (spec); for
 * default models (served by our nodes) billing's admission refuses any field outside
 * `NODE_CHAT_PARAMETERS` with 400 (see `unsupportedNodeChatParameter`). Field order is the order
 * errors are reported in.
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
    top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.topLogprobsMax })),
    stream_options: Type.Optional(
      OpenObject({ description: 'Accepted; the gateway always asks nodes for usage itself.' }),
    ),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    store: Type.Optional(
      Type.Boolean({ description: 'Accepted; the gateway stores no completions for later use.' }),
    ),
    metadata: Type.Optional(
      Type.Record(
        Type.String({ maxLength: LIMITS.metadataKeyMaxLength }),
        Type.String({ maxLength: LIMITS.metadataValueMaxLength }),
        { maxProperties: LIMITS.metadataMaxEntries, description: 'Accepted with `store`.' },
      ),
    ),
    prompt_cache_key: Type.Optional(Type.String({ maxLength: LIMITS.userMaxLength })),
    safety_identifier: Type.Optional(Type.String({ maxLength: LIMITS.userMaxLength })),
    verbosity: Type.Optional(StringEnum(VERBOSITIES)),
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

export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>;

/** Chat parameters the gateway handles itself for default models: never forwarded as sent. */
export const GATEWAY_CHAT_PARAMETERS = [
  'model',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'service_tier',
  'webhook',
] as const;

/** What the worker copies from a chat request to a node (it sets model, max_tokens, stream). */
export const NODE_FORWARDED_CHAT_PARAMETERS: readonly string[] = [
  'messages',
  'temperature',
  'top_p',
  'stop',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'response_format',
  'tools',
  'tool_choice',
  'reasoning_effort',
  'seed',
  'user',
  'logprobs',
  'top_logprobs',
  'parallel_tool_calls',
];

/**
 * Accepted for default models and not sent to the node: they ask the reference API for things
 * that cost a node nothing and that it has no use for (storing the completion and its metadata
 * for distillation, a prompt-cache routing key, an abuse-tracking id, GPT-5's answer verbosity).
 * Nodes cache prompt prefixes on their own, and `user` is forwarded.
 */
export const NODE_DROPPED_CHAT_PARAMETERS = [
  'store',
  'metadata',
  'prompt_cache_key',
  'safety_identifier',
  'verbosity',
] as const;

/**
 * Top-level chat parameters a default model (a node) accepts: the spec's table for default models
 * plus fields of the reference API that cost nothing extra. `n` multiplies compute, but the hold
 * and the settlement count every choice. Anything else (`best_of`, `use_beam_search`,
 * `ignore_eos`, `metadata`, ...) could make a node do unbilled work, so it is refused.
 */
export const NODE_CHAT_PARAMETERS: ReadonlySet<string> = new Set([
  ...GATEWAY_CHAT_PARAMETERS,
  ...NODE_FORWARDED_CHAT_PARAMETERS,
  ...NODE_DROPPED_CHAT_PARAMETERS,
]);

/**
 * The first (sorted) top-level parameter a default model does not accept, clipped for echoing;
 * undefined when there is none. Edge sends it with the admission: only billing knows the model's
 * provider, and it refuses before placing a hold.
 */
export function unsupportedNodeChatParameter(
  request: Readonly<Record<string, unknown>>,
): string | undefined {
  const names = Object.keys(request).filter(
    (name) => request[name] !== undefined && !NODE_CHAT_PARAMETERS.has(name),
  );
  const first = names.sort()[0];
  return first === undefined ? undefined : clipParamName(first);
}

/*
 * What a chat request's content asks of its model beyond text. Edge derives it once from the
 * validated messages; billing's admission refuses (400, naming the first part) a kind the catalog
 * model does not declare, and sizes the hold with the model's per-image token ceiling, in the
 * same statement that places the hold.
 */

/** `remote_image`: an image given by http(s) URL, which the model node would fetch itself. */
export const MEDIA_KINDS = ['image', 'remote_image', 'audio', 'file'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

export interface MediaUse {
  kind: MediaKind;
  /** The first part of this kind, e.g. `messages[1].content[0]`. */
  param: string;
}

export interface ChatMediaUse {
  /** One entry per kind used, in the order the kinds first appear. */
  kinds: MediaUse[];
  /** Image parts of every message: each adds the model's `image_tokens` to the hold. */
  imageCount: number;
}

type Part = { type: string; image_url?: { url?: unknown } };

function partsOf(message: ChatMessage): readonly Part[] {
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) ? (content as Part[]) : [];
}

function kindOf(part: Part): MediaKind | undefined {
  if (part.type === 'image_url') {
    const url = part.image_url?.url;
    return typeof url === 'string' && !url.startsWith('data:') ? 'remote_image' : 'image';
  }
  return part.type === 'input_audio' ? 'audio' : part.type === 'file' ? 'file' : undefined;
}

export function chatMediaUse(messages: readonly ChatMessage[]): ChatMediaUse {
  const kinds = new Map<MediaKind, string>();
  let imageCount = 0;
  messages.forEach((message, m) => {
    partsOf(message).forEach((part, p) => {
      const kind = kindOf(part);
      if (kind === undefined) return;
      if (part.type === 'image_url') imageCount += 1;
      if (!kinds.has(kind)) kinds.set(kind, `messages[${m}].content[${p}]`);
    });
  });
  return { kinds: [...kinds].map(([kind, param]) => ({ kind, param })), imageCount };
}

const invalid = (message: string, param: string) =>
  new GatewayError('invalid_request_body', message, { param });

/**
 * Rules of the message schema that JSON Schema states poorly: an assistant message says
 * something (content, or a tool / function call), and a request carries a bounded number of
 * image, audio and file parts (each adds a token ceiling to its hold).
 */
export function checkChatMessageRules(messages: readonly ChatMessage[]): void {
  let mediaParts = 0;
  messages.forEach((message, m) => {
    if (message.role === 'assistant' && message.content == null) {
      const calls = (message.tool_calls?.length ?? 0) > 0 || message.function_call != null;
      if (!calls) {
        throw invalid(
          `messages[${m}].content is required unless tool_calls or function_call is present`,
          `messages[${m}].content`,
        );
      }
    }
    partsOf(message).forEach((part, p) => {
      if (!(part.type in PART_MODALITIES)) return;
      mediaParts += 1;
      if (mediaParts > LIMITS.mediaPartsMaxItems) {
        throw invalid(
          `a request may carry at most ${LIMITS.mediaPartsMaxItems} image, audio and file parts`,
          `messages[${m}].content[${p}]`,
        );
      }
    });
  });
}
