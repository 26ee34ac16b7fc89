import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum, dzdAmountSchema } from './schemas/common.js';

/*
 * Budgets: a spending cap per API key (covering the scoped tokens it signs)
 * or per scoped token, per window. Set through the operator API
 * (`PUT /admin/v1/accounts/{id}/api-keys/{name}/budget`,
 * `PUT /admin/v1/accounts/{id}/scoped-tokens/{token_id}/budget`), read there and by the caller
 * itself (`GET /v1/key`). Enforced by billing's admission with the hold (402 `budget_exhausted`).
 */

/** `day`, `week` (ISO: from Monday), `month` (calendar) in the budget's zone; `total` never resets. */
export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/**
 * The IANA areas a zone name may start with. Names outside them (`localtime`, `posixrules`,
 * `Factory`, `EST5EDT`, `posix/...`, `right/...`) are files or legacy rules of the machine's
 * tz database, whose meaning depends on the machine: refused.
 */
export const TIME_ZONE_AREAS = [
  'Africa',
  'America',
  'Antarctica',
  'Arctic',
  'Asia',
  'Atlantic',
  'Australia',
  'Europe',
  'Indian',
  'Pacific',
  'Etc',
] as const;

/**
 * An IANA time zone name: `UTC`, or `Area/Location` (`Africa/Algiers`,
 * `America/Argentina/Buenos_Aires`, `Etc/GMT+1`); billing checks that its database knows it.
 */
export const TIME_ZONE_PATTERN = `^(UTC|(${TIME_ZONE_AREAS.join('|')})/[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)?)$`;

export const BudgetPutRequestSchema = Type.Object(
  {
    limit_dzd: dzdAmountSchema('The cap per window, DZD, more than 0, at most 6 decimals.'),
    period: StringEnum(BUDGET_PERIODS),
    time_zone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: TIME_ZONE_PATTERN,
        description: 'Where the windows start (midnight there); UTC by default.',
      }),
    ),
  },
  { $id: 'BudgetPutRequest', additionalProperties: false },
);
export type BudgetPutRequest = Static<typeof BudgetPutRequestSchema>;

const Dzd = (description: string) => Type.Number({ description });
const MicroDzd = (description: string) => Type.String({ pattern: '^[0-9]+$', description });
const Owner = StringEnum(['api_key', 'scoped_token'] as const);

/** A budget as of now: its current window, what is spent in it and what pending holds reserve. */
export const BudgetViewSchema = Type.Object(
  {
    object: Type.Literal('budget'),
    applies_to: Owner,
    owner: Type.String({ description: "The key's name or the token's id." }),
    period: StringEnum(BUDGET_PERIODS),
    time_zone: Type.String(),
    limit_dzd: Dzd('The cap per window, DZD.'),
    spent_dzd: Dzd('Settled in the current window, DZD.'),
    reserved_dzd: Dzd("Pending holds' reservations, DZD."),
    remaining_dzd: Dzd('limit − spent − reserved, never below 0.'),
    limit_micro_dzd: MicroDzd('Exact µDZD (the `_dzd` numbers are rounded for display only).'),
    spent_micro_dzd: MicroDzd('Exact µDZD.'),
    reserved_micro_dzd: MicroDzd('Exact µDZD.'),
    remaining_micro_dzd: MicroDzd('Exact µDZD.'),
    window_start: Type.String({ format: 'date-time' }),
    resets_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the window ends and spent starts over; null for `total`.',
    }),
  },
  { $id: 'BudgetView', additionalProperties: false },
);
export type BudgetView = Static<typeof BudgetViewSchema>;

/** `GET /admin/v1/accounts/{id}/budgets`: every budget of the account. */
export const BudgetListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(BudgetViewSchema) },
  { $id: 'BudgetList', additionalProperties: false },
);
export type BudgetList = Static<typeof BudgetListSchema>;

/** `GET /v1/key`: the calling credential, its budgets and its rate limit. */
export const KeyInfoSchema = Type.Object(
  {
    object: Type.Literal('key'),
    kind: Owner,
    account_id: Type.String(),
    api_key: Type.String({
      description: "The key's name (for a scoped token: the key that signed it).",
    }),
    scoped_token_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'Null for an API key, and for a client-minted token not registered yet (no request made).',
    }),
    budgets: Type.Array(BudgetViewSchema, {
      description: "The key's budget (it covers its tokens too) and, for a token, the token's own.",
    }),
    spending_limit_dzd: Type.Union([Type.Number(), Type.Null()], {
      description: "A scoped token's lifetime cap from its claims (`spending_limit`), DZD.",
    }),
    spent_dzd: Type.Union([Type.Number(), Type.Null()], {
      description: "A scoped token's spend since it was registered, DZD; null for an API key.",
    }),
    rate_limit: Type.Object(
      {
        limit_per_minute: Type.Integer(),
        remaining: Type.Integer({
          description: 'In the current window; this read is not counted.',
        }),
        resets_at: Type.String({ format: 'date-time' }),
        applies_to: StringEnum(['account', 'api_key', 'scoped_token'] as const, {
          description:
            "Whose requests-per-minute limit these numbers are: the tightest of the account's, " +
            "the key's and the scoped token's.",
        }),
        tokens: Type.Union(
          [
            Type.Object(
              {
                limit_per_minute: Type.Integer(),
                remaining: Type.Integer(),
                resets_at: Type.String({ format: 'date-time' }),
              },
              { additionalProperties: false },
            ),
            Type.Null(),
          ],
          {
            description:
              "The tightest tokens-per-minute limit of the key's and the token's; null when " +
              'neither has one.',
          },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'KeyInfo', additionalProperties: false },
);
export type KeyInfo = Static<typeof KeyInfoSchema>;
