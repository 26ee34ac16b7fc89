import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { LIMITS } from './limits.js';

/**
 * `POST /v1/scoped-jwt`. Unknown fields are rejected: a misspelt `spending_limit` or `models`
 * would otherwise mint a token with no limit or access to every model.
 */
export const ScopedTokenCreateRequestSchema = Type.Object(
  {
    api_key_name: Type.String({
      minLength: 1,
      maxLength: LIMITS.apiKeyNameMaxLength,
      description: 'Name of the API key that signs the token and is billed.',
    }),
    models: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.modelIdMaxLength }), {
        // An empty list would mint a token that can call nothing; omit the field for "any model".
        minItems: 1,
        maxItems: LIMITS.tokenModelsMaxItems,
        description: 'Models the token may use. Omitted: any model.',
      }),
    ),
    expires_delta: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: LIMITS.scopedTokenMaxLifetimeS,
        description: 'Lifetime in seconds from now. Default and maximum: 1 year.',
      }),
    ),
    expires_at: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Expiry as unix seconds, at most 1 year ahead. Alternative to expires_delta.',
      }),
    ),
    spending_limit: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: LIMITS.spendingLimitMaxDzd,
        description: 'Lifetime spend limit in DZD, at most 6 decimals. Omitted: no limit.',
      }),
    ),
  },
  {
    $id: 'ScopedTokenCreateRequest',
    additionalProperties: false,
    not: { required: ['expires_delta', 'expires_at'] },
    description: 'Scoped token (scoped JWT) creation request.',
  },
);

export type ScopedTokenCreateRequest = Static<typeof ScopedTokenCreateRequestSchema>;
