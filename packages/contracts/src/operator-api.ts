import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { DASHBOARD_LIMITS, OPERATOR_ROLES } from './dashboard-api.js';
import { StringEnum, dzdAmountSchema } from './schemas/common.js';

/*
 * The operator API's request bodies (`/admin/v1`, decisions §4), defined once: edge validates
 * them (and documents them in its OpenAPI document), billing, which owns the data, validates the
 * ones it receives again with the same schemas and applies its finer rules (trimming,
 * uniqueness). `PUT /admin/v1/models/{model}` is `ModelPutRequestSchema` (catalog-api.ts).
 */

const closed = { additionalProperties: false } as const;

export const AccountCreateRequestSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { $id: 'AdminAccountCreateRequest', ...closed },
);
export type AccountCreateRequest = Static<typeof AccountCreateRequestSchema>;

export const AccountPatchRequestSchema = Type.Object(
  {
    rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    webhook_format: Type.Optional(StringEnum(['A', 'B'] as const)),
  },
  { $id: 'AdminAccountPatchRequest', ...closed },
);
export type AccountPatchRequest = Static<typeof AccountPatchRequestSchema>;

export const ApiKeyCreateRequestSchema = Type.Object(
  { name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }) },
  { $id: 'AdminApiKeyCreateRequest', ...closed },
);
export type ApiKeyCreateRequest = Static<typeof ApiKeyCreateRequestSchema>;

export const CreditRequestSchema = Type.Object(
  {
    amount_dzd: dzdAmountSchema(
      'DZD (a number, or a decimal string), at most 6 decimals. Send an Idempotency-Key: ' +
        'the credit happens once.',
    ),
    reference: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { $id: 'AdminCreditRequest', ...closed },
);
export type CreditRequest = Static<typeof CreditRequestSchema>;

export const ScopedTokenRevokeRequestSchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 131_072 }) },
  { $id: 'AdminScopedTokenRevokeRequest', ...closed },
);
export type ScopedTokenRevokeRequest = Static<typeof ScopedTokenRevokeRequestSchema>;

/** `gatewayctl operator-users create`: a dashboard user of the platform team. */
export const OperatorUserCreateRequestSchema = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: DASHBOARD_LIMITS.emailMaxLength }),
    role: StringEnum(OPERATOR_ROLES),
    password: Type.String({
      minLength: DASHBOARD_LIMITS.passwordMinLength,
      maxLength: DASHBOARD_LIMITS.passwordMaxLength,
    }),
  },
  { $id: 'AdminOperatorUserCreateRequest', ...closed },
);
export type OperatorUserCreateRequest = Static<typeof OperatorUserCreateRequestSchema>;
