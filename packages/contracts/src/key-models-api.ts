import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { LIMITS } from './schemas/limits.js';

/*
 * An API key's own list of models (`PUT|GET /admin/v1/accounts/{id}/api-keys/{name}/models`):
 * the models the key may call, which also bounds the scoped tokens it signs (a token's own list
 * narrows it, never widens it). Enforced by billing's admission: 403 `model_not_allowed` naming
 * the key.
 */

export const ApiKeyModelsPutRequestSchema = Type.Object(
  {
    models: Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.modelIdMaxLength }), {
      maxItems: LIMITS.apiKeyModelsMaxItems,
      uniqueItems: true,
      description:
        'Model ids the key may use (catalog ids; a model added later can be listed ahead). ' +
        'Empty: any model.',
    }),
  },
  { $id: 'ApiKeyModelsPutRequest', additionalProperties: false },
);
export type ApiKeyModelsPutRequest = Static<typeof ApiKeyModelsPutRequestSchema>;

export const ApiKeyModelsViewSchema = Type.Object(
  {
    object: Type.Literal('api_key_models'),
    api_key: Type.String({ description: "The key's name." }),
    models: Type.Array(Type.String(), { description: 'Sorted; empty: any model.' }),
  },
  { $id: 'ApiKeyModelsView', additionalProperties: false },
);
export type ApiKeyModelsView = Static<typeof ApiKeyModelsViewSchema>;
