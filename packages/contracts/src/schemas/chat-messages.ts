import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { StringEnum } from './common.js';
import { LIMITS } from './limits.js';

/*
 * The reference chat message schema: every role and content shape the widely used
 * chat completions API takes, so agents built on the AI SDK, LangChain or the Agents SDK can send
 * tool results back. Messages and parts keep unknown fields (they are forwarded and counted in
 * the hold like any other field a model may read); what is declared is checked.
 *
 * Roles and parts are discriminated unions (Ajv's `discriminator`): only the branch the `role`
 * (or part `type`) names is checked, so an error names the one rule that failed instead of every
 * alternative's.
 */

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

/** Content part types that need a catalog capability (`input_modalities`), by modality. */
export const PART_MODALITIES = { image_url: 'image', input_audio: 'audio', file: 'file' } as const;
export const INPUT_MODALITIES = ['text', 'image', 'audio', 'file'] as const;
export type InputModality = (typeof INPUT_MODALITIES)[number];

export const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;
export const AUDIO_FORMATS = ['wav', 'mp3'] as const;

const Text = Type.String({ maxLength: LIMITS.textMaxLength });
const Name = Type.String({ minLength: 1, maxLength: LIMITS.messageNameMaxLength });
/** Base64 payloads of audio and file parts: bounded by the decoded byte limit. */
const Base64Payload = Type.String({ minLength: 1, maxLength: LIMITS.dataUrlMaxLength });

const part = <K extends string, T extends Record<string, TSchema>>(
  type: K,
  fields: T,
  description: string,
) => Type.Object({ type: Type.Literal(type), ...fields }, { description });

export const TextPartSchema = part('text', { text: Text }, 'Text.');

export const ImageUrlPartSchema = part(
  'image_url',
  {
    image_url: Type.Object({
      url: Type.String({
        format: 'image-url',
        maxLength: LIMITS.dataUrlMaxLength,
        description:
          'A `data:image/...;base64,` URL, or an http(s) URL on models that allow remote images ' +
          '(never fetched by the gateway).',
      }),
      detail: Type.Optional(StringEnum(IMAGE_DETAILS)),
    }),
  },
  'An image; needs a model with the `image` input modality.',
);

export const InputAudioPartSchema = part(
  'input_audio',
  {
    input_audio: Type.Object({ data: Base64Payload, format: StringEnum(AUDIO_FORMATS) }),
  },
  'Base64 audio; needs a model with the `audio` input modality.',
);

export const FilePartSchema = part(
  'file',
  {
    file: Type.Object({
      file_data: Type.Optional(Base64Payload),
      file_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      filename: Type.Optional(Type.String({ maxLength: 256 })),
    }),
  },
  'A file (base64 data or an id the model node knows); needs the `file` input modality.',
);

export const RefusalPartSchema = part('refusal', { refusal: Text }, 'A refusal (assistant).');

/** `oneOf` checked only on the branch its `type` (or `role`) names. */
function discriminated<T extends TSchema[]>(tag: string, branches: [...T], description?: string) {
  return Type.Unsafe<Static<ReturnType<typeof Type.Union<T>>>>({
    type: 'object',
    required: [tag],
    discriminator: { propertyName: tag },
    oneOf: branches,
    ...(description === undefined ? {} : { description }),
  });
}

const parts = <T extends TSchema[]>(branches: [...T]) =>
  Type.Array(discriminated('type', branches), { maxItems: LIMITS.contentPartsMaxItems });

const TextContent = Type.Union([Text, parts([TextPartSchema])]);

const ToolCallSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: LIMITS.toolCallIdMaxLength }),
  type: Type.Literal('function'),
  function: Type.Object({ name: Name, arguments: Text }),
});

const FunctionCallSchema = Type.Object({ name: Name, arguments: Text });

const message = <R extends ChatRole, T extends Record<string, TSchema>>(role: R, fields: T) =>
  Type.Object({ role: Type.Literal(role), ...fields });

export const ChatMessageSchema = discriminated(
  'role',
  [
    message('system', { content: TextContent, name: Type.Optional(Name) }),
    message('developer', { content: TextContent, name: Type.Optional(Name) }),
    message('user', {
      content: Type.Union([
        Text,
        parts([TextPartSchema, ImageUrlPartSchema, InputAudioPartSchema, FilePartSchema]),
      ]),
      name: Type.Optional(Name),
    }),
    message('assistant', {
      // Null or absent only beside tool_calls / function_call (checked in validation.ts).
      content: Type.Optional(
        Type.Union([Text, parts([TextPartSchema, RefusalPartSchema]), Type.Null()]),
      ),
      refusal: Type.Optional(Type.Union([Text, Type.Null()])),
      name: Type.Optional(Name),
      tool_calls: Type.Optional(Type.Array(ToolCallSchema, { maxItems: LIMITS.toolCallsMaxItems })),
      function_call: Type.Optional(Type.Union([FunctionCallSchema, Type.Null()])),
      audio: Type.Optional(Type.Union([Type.Object({ id: Name }), Type.Null()])),
    }),
    message('tool', {
      content: TextContent,
      tool_call_id: Type.String({ minLength: 1, maxLength: LIMITS.toolCallIdMaxLength }),
    }),
    message('function', { content: Type.Union([Text, Type.Null()]), name: Name }),
  ],
  'One conversation turn, as in the reference chat completions API.',
);

export type ChatMessage = Static<typeof ChatMessageSchema>;
