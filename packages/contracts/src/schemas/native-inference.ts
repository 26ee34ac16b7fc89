import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { LIMITS } from './limits.js';

const Text = Type.String({ maxLength: LIMITS.textMaxLength });

/**
 * Generation parameters of the native endpoint (TGI-style). Closed: every one of them costs at most
 * what usage bills. Refused as unknown: multipliers (`best_of`), what the gateway sets itself
 * (`details`, `decoder_input_details`), and what changes the work or the output beyond it
 * (`grammar`, `adapter_id`, `top_n_tokens`, `truncate`, `return_full_text`, `watermark`).
 */
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
    top_p: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.topKMax })),
    typical_p: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
    repetition_penalty: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: LIMITS.repetitionPenaltyMax }),
    ),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    do_sample: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    description: 'Generation parameters; unknown ones are refused (400 naming them).',
  },
);

/** Names a node may receive in `parameters` (the worker copies only these). */
export const NATIVE_PARAMETER_NAMES: readonly string[] = Object.keys(
  NativeInferenceParametersSchema.properties,
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
