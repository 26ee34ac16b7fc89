import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { LIMITS } from './limits.js';

const Text = Type.String({ maxLength: LIMITS.textMaxLength });

export const NativeInferenceParametersSchema = Type.Object(
  {
    max_new_tokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: LIMITS.tokensMax,
        description: 'Output cap. Without it generation may run to the context limit, at a cost.',
      }),
    ),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  },
  {
    // Spec: "among others". Other generation parameters go to the model node unchecked.
    additionalProperties: true,
  },
);

/**
 * `POST /v1/inference/{model}`. Exactly one of `input` (text generation) and `inputs` (embedding
 * models). Unknown top-level fields are rejected, unlike chat completions: nothing drops them with
 * a warning here, and a misspelt `webhook` would silently turn an async request into a sync one.
 */
export const NativeInferenceRequestSchema = Type.Object(
  {
    input: Type.Optional(
      Type.String({ maxLength: LIMITS.textMaxLength, description: 'Raw text input.' }),
    ),
    inputs: Type.Optional(
      Type.Array(Text, {
        minItems: 1,
        maxItems: LIMITS.inputsMaxItems,
        description: 'Inputs for embedding models.',
      }),
    ),
    parameters: Type.Optional(NativeInferenceParametersSchema),
    stop: Type.Optional(
      Type.Array(Type.String({ maxLength: LIMITS.stopSequenceMaxLength }), {
        maxItems: LIMITS.stopMaxItems,
      }),
    ),
    webhook: Type.Optional(
      Type.String({
        format: 'http-url',
        maxLength: LIMITS.urlMaxLength,
        description:
          'When present the request is asynchronous and the result is POSTed here. The edge ' +
          'additionally requires https and a public address unless a development setting allows ' +
          'otherwise.',
      }),
    ),
  },
  {
    $id: 'NativeInferenceRequest',
    additionalProperties: false,
    oneOf: [{ required: ['input'] }, { required: ['inputs'] }],
    description: 'Native inference request.',
  },
);

export type NativeInferenceRequest = Static<typeof NativeInferenceRequestSchema>;
