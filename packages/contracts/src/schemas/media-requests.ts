import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { StringEnum } from './common.js';
import { LIMITS } from './limits.js';

/*
 * Request bodies of the routes beyond chat and native inference (default models only), in the
 * shapes of the widely used OpenAI API (Cohere's for rerank). They validate requests AND feed
 * the OpenAPI document: one declaration. Unknown fields are refused: nothing would forward them.
 */

const Model = Type.String({
  minLength: 1,
  maxLength: LIMITS.modelIdMaxLength,
  description: 'Catalog model identifier (a default model of the right kind).',
});
const Text = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, ...(description ? { description } : {}) });
const User = Type.String({ maxLength: LIMITS.userMaxLength });
const Size = Type.String({ pattern: '^(auto|[0-9]{2,4}x[0-9]{2,4})$', description: 'WxH' });

/** Prompt lengths for generation routes; far above what the models take. */
export const MEDIA_LIMITS = {
  promptMaxLength: 32_000,
  speechInputMaxLength: 4_096,
  imagesMax: 10,
  videoSecondsMax: 60,
  rerankDocumentsMax: 1_000,
} as const;

function body<P extends Record<string, TSchema>>($id: string, description: string, properties: P) {
  return Type.Object(properties, { $id, description, additionalProperties: false });
}

export const EmbeddingsRequestSchema = body('EmbeddingsRequest', 'POST /v1/embeddings', {
  model: Model,
  input: Type.Union([
    Type.String({ maxLength: LIMITS.textMaxLength }),
    Type.Array(Type.String({ maxLength: LIMITS.textMaxLength }), {
      minItems: 1,
      maxItems: LIMITS.inputsMaxItems,
    }),
  ]),
  encoding_format: Type.Optional(StringEnum(['float', 'base64'] as const)),
  dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
  user: Type.Optional(User),
});

export const ImagesRequestSchema = body('ImagesRequest', 'POST /v1/images/generations', {
  model: Model,
  prompt: Text(MEDIA_LIMITS.promptMaxLength),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: MEDIA_LIMITS.imagesMax })),
  size: Type.Optional(Size),
  response_format: Type.Optional(StringEnum(['url', 'b64_json'] as const)),
  quality: Type.Optional(StringEnum(['auto', 'standard', 'hd', 'low', 'medium', 'high'] as const)),
  style: Type.Optional(StringEnum(['vivid', 'natural'] as const)),
  user: Type.Optional(User),
});

export const SpeechRequestSchema = body('SpeechRequest', 'POST /v1/audio/speech', {
  model: Model,
  input: Text(MEDIA_LIMITS.speechInputMaxLength, 'Text to speak.'),
  voice: Text(64),
  response_format: Type.Optional(StringEnum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const)),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
});

/** The text fields of the multipart upload; the audio itself is the `file` part. */
export const TranscriptionRequestSchema = body(
  'TranscriptionRequest',
  'POST /v1/audio/transcriptions (multipart/form-data fields besides `file`)',
  {
    model: Model,
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}$', description: 'ISO-639-1' })),
    prompt: Type.Optional(Type.String({ maxLength: MEDIA_LIMITS.speechInputMaxLength })),
    response_format: Type.Optional(
      StringEnum(['json', 'text', 'srt', 'verbose_json', 'vtt'] as const),
    ),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
);

export const VideoRequestSchema = body('VideoRequest', 'POST /v1/video/generations', {
  model: Model,
  prompt: Text(MEDIA_LIMITS.promptMaxLength),
  seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MEDIA_LIMITS.videoSecondsMax })),
  size: Type.Optional(Size),
});

export const RerankRequestSchema = body('RerankRequest', 'POST /v1/rerank (Cohere-style)', {
  model: Model,
  query: Text(LIMITS.textMaxLength),
  documents: Type.Array(Type.String({ maxLength: LIMITS.textMaxLength }), {
    minItems: 1,
    maxItems: MEDIA_LIMITS.rerankDocumentsMax,
  }),
  top_n: Type.Optional(Type.Integer({ minimum: 1, maximum: MEDIA_LIMITS.rerankDocumentsMax })),
  return_documents: Type.Optional(Type.Boolean()),
});

export type EmbeddingsRequest = Static<typeof EmbeddingsRequestSchema>;
export type ImagesRequest = Static<typeof ImagesRequestSchema>;
export type SpeechRequest = Static<typeof SpeechRequestSchema>;
export type TranscriptionRequest = Static<typeof TranscriptionRequestSchema>;
export type VideoRequest = Static<typeof VideoRequestSchema>;
export type RerankRequest = Static<typeof RerankRequestSchema>;
