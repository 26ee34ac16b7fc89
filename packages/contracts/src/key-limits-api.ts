import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum } from './schemas/common.js';

/*
 * Per-key rate limits: an API key's (covering the scoped tokens it signs) or a
 * registered scoped token's own requests and tokens per minute, beside the account's requests
 * per minute. Set through the operator API
 * (`PUT /admin/v1/accounts/{id}/api-keys/{name}/rate-limit`,
 * `PUT /admin/v1/accounts/{id}/scoped-tokens/{token_id}/rate-limit`); enforced by billing's
 * admission (429 `rate_limit_exceeded` naming whose limit); reported by `X-RateLimit-*` and
 * `GET /v1/key`.
 */

export const KEY_RATE_LIMITS = {
  requestsPerMinuteMax: 1_000_000,
  tokensPerMinuteMax: 10_000_000_000,
  /** At most this many limits in an account's list (keys' first, then tokens'). */
  listedMax: 1_000,
} as const;

const Limit = (maximum: number, description: string) =>
  Type.Union([Type.Integer({ minimum: 1, maximum }), Type.Null()], { description });

/** A PUT replaces both limits: an omitted one is removed (null). At least one must be given. */
export const KeyRateLimitPutRequestSchema = Type.Object(
  {
    requests_per_minute: Type.Optional(
      Limit(KEY_RATE_LIMITS.requestsPerMinuteMax, 'Requests per minute; null or omitted: none.'),
    ),
    tokens_per_minute: Type.Optional(
      Limit(
        KEY_RATE_LIMITS.tokensPerMinuteMax,
        'Tokens per minute (the prompt plus the output cap a request reserves; what it did not ' +
          'use comes back when it ends); null or omitted: none.',
      ),
    ),
  },
  { $id: 'KeyRateLimitPutRequest', additionalProperties: false, minProperties: 1 },
);
export type KeyRateLimitPutRequest = Static<typeof KeyRateLimitPutRequestSchema>;

export const KeyRateLimitViewSchema = Type.Object(
  {
    object: Type.Literal('rate_limit'),
    applies_to: StringEnum(['api_key', 'scoped_token'] as const),
    owner: Type.String({ description: "The key's name or the token's id." }),
    requests_per_minute: Type.Union([Type.Integer(), Type.Null()]),
    tokens_per_minute: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'KeyRateLimitView', additionalProperties: false },
);
export type KeyRateLimitView = Static<typeof KeyRateLimitViewSchema>;

/**
 * `GET /admin/v1/accounts/{id}/rate-limits`: the account's keys and registered tokens with a
 * limit of their own (keys by name, then tokens by id; at most `KEY_RATE_LIMITS.listedMax`).
 */
export const KeyRateLimitListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(KeyRateLimitViewSchema, { maxItems: KEY_RATE_LIMITS.listedMax }),
  },
  { $id: 'KeyRateLimitList', additionalProperties: false },
);
export type KeyRateLimitList = Static<typeof KeyRateLimitListSchema>;
