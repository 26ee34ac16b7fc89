import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { INPUT_MODALITIES } from './schemas/chat-messages.js';
import { StringEnum } from './schemas/common.js';
import { LIMITS } from './schemas/limits.js';
import { MODEL_KINDS, MODEL_PROVIDERS, NODE_PROTOCOLS } from './schemas/catalog-names.js';
import { DEFAULT_IMAGE_TOKENS, IMAGE_TOKENS_MAX } from './operator-api.js';

/* The catalog's operator contract: one definition for edge, billing and the dashboard. */

export const MAX_OUTPUT_TOKENS_LIMIT = 1_000_000;
export const MODEL_NODES_MAX_ITEMS = 64;
export const NODE_WEIGHT_MAX = 1_000;
/** DZD per million tokens; keeps the µDZD price within exact JSON rendering. */
export const PRICE_MAX_DZD_PER_M = 1_000_000_000;
const Price = (description: string) =>
  Type.Number({ minimum: 0, maximum: PRICE_MAX_DZD_PER_M, description });

/**
 * `PUT /admin/v1/models/{model}` body (decisions §4): edge checks it (and documents it in the
 * OpenAPI document), billing, which owns the catalog, checks it again and applies it.
 */
export const ModelPutRequestSchema = Type.Object(
  {
    kind: StringEnum(MODEL_KINDS),
    provider: StringEnum(MODEL_PROVIDERS),
    protocol: Type.Optional(
      StringEnum(NODE_PROTOCOLS, { description: 'Node API flavour; openai by default.' }),
    ),
    upstream_model: Type.String({ minLength: 1, maxLength: LIMITS.modelIdMaxLength }),
    input_price_dzd_per_m: Price('DZD per million input tokens, at most 6 decimals.'),
    output_price_dzd_per_m: Price('DZD per million output tokens, at most 6 decimals.'),
    max_output_tokens: Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_TOKENS_LIMIT }),
    input_modalities: Type.Optional(
      Type.Array(StringEnum(INPUT_MODALITIES), {
        minItems: 1,
        maxItems: INPUT_MODALITIES.length,
        uniqueItems: true,
        contains: Type.Literal('text'),
        description: 'What the model reads besides text; must include `text`. ["text"] by default.',
      }),
    ),
    image_tokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: IMAGE_TOKENS_MAX,
        description: `Tokens the hold counts per image part; ${DEFAULT_IMAGE_TOKENS} by default.`,
      }),
    ),
    remote_images: Type.Optional(
      Type.Boolean({
        description:
          'Image parts may be http(s) URLs, sent to the nodes as is (they fetch them; the ' +
          'gateway never does). false by default: data URLs only.',
      }),
    ),
    nodes: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: Type.String({ format: 'http-url', maxLength: LIMITS.urlMaxLength }),
            weight: Type.Optional(Type.Integer({ minimum: 1, maximum: NODE_WEIGHT_MAX })),
          },
          { additionalProperties: false },
        ),
        { maxItems: MODEL_NODES_MAX_ITEMS },
      ),
    ),
  },
  { $id: 'AdminModelPutRequest', additionalProperties: false },
);

export type ModelPutRequest = Static<typeof ModelPutRequestSchema>;
