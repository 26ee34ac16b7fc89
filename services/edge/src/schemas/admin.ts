import { Type } from '@sinclair/typebox';
import { DASHBOARD_LIMITS, OPERATOR_ROLES, StringEnum } from '@gateway/contracts';

/*
 * Bodies of the operator API (decisions §4). Edge checks their shape with these schemas (which
 * also document them in the OpenAPI document); billing, which owns the data, applies its finer
 * rules again (trimming, uniqueness, 6-decimal amounts).
 */

const closed = { additionalProperties: false } as const;

export const AccountCreateRequestSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { $id: 'AdminAccountCreateRequest', ...closed },
);

export const AccountPatchRequestSchema = Type.Object(
  {
    rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    webhook_format: Type.Optional(StringEnum(['A', 'B'] as const)),
  },
  { $id: 'AdminAccountPatchRequest', ...closed },
);

export const ApiKeyCreateRequestSchema = Type.Object(
  { name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }) },
  { $id: 'AdminApiKeyCreateRequest', ...closed },
);

export const CreditRequestSchema = Type.Object(
  {
    amount_dzd: Type.Union(
      [
        Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000 }),
        Type.String({ pattern: '^[0-9]{1,10}(\\.[0-9]{1,12})?$' }),
      ],
      {
        description:
          'DZD (a number, or a decimal string), at most 6 decimals. Send an Idempotency-Key: ' +
          'the credit happens once.',
      },
    ),
    reference: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { $id: 'AdminCreditRequest', ...closed },
);

export const ScopedTokenRevokeRequestSchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 131_072 }) },
  { $id: 'AdminScopedTokenRevokeRequest', ...closed },
);

/** `PUT /admin/v1/models/{model}`: defined once, in the contracts (billing checks it too). */
export { ModelPutRequestSchema } from '@gateway/contracts';

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
