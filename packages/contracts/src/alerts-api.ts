import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum, dzdAmountSchema } from './schemas/common.js';

/*
 * Account alerts: signed webhooks when an account's balance runs low, when a
 * key's or token's budget reaches a share of its limit, and when the balance is projected to run
 * out. Configured per account through the operator API (`/admin/v1/accounts/{id}/alerts`) and
 * the dashboard (`/dashboard/api/alerts`); billing evaluates, the dispatcher delivers (signed
 * and retried like job webhooks, Standard Webhooks headers, `webhook-id` = the alert's id).
 */

export const ALERT_TYPES = [
  'balance.low',
  'budget.threshold',
  'balance.exhaustion_projected',
] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** The budget shares alerted on when none are given. */
export const DEFAULT_BUDGET_THRESHOLDS_PERCENT = [50, 80, 100] as const;
export const MAX_BUDGET_THRESHOLDS = 10;
export const MAX_EXHAUSTION_HOURS = 720;
export const MAX_ALERT_URL_LENGTH = 2048;

const AlertUrl = Type.String({
  format: 'http-url',
  maxLength: MAX_ALERT_URL_LENGTH,
  description: 'Where alerts are POSTed (https; stored encrypted: it may carry a token).',
});
const Threshold = Type.Integer({ minimum: 1, maximum: 100 });
const Hours = Type.Integer({ minimum: 1, maximum: MAX_EXHAUSTION_HOURS });

/** `PUT …/alerts`: the whole setting (an absent field takes its default). */
export const AlertSettingsPutRequestSchema = Type.Object(
  {
    url: AlertUrl,
    enabled: Type.Optional(Type.Boolean({ description: 'true by default.' })),
    balance_below_dzd: Type.Optional(
      Type.Union([dzdAmountSchema('Alert when the available balance falls below.'), Type.Null()]),
    ),
    budget_thresholds_percent: Type.Optional(
      Type.Array(Threshold, {
        maxItems: MAX_BUDGET_THRESHOLDS,
        uniqueItems: true,
        description: 'Budget shares (spent + reserved) alerted on; [50, 80, 100] by default.',
      }),
    ),
    exhaustion_hours: Type.Optional(
      Type.Union([Hours, Type.Null()], {
        description: 'Alert when the balance would last fewer hours at the last hour’s spend.',
      }),
    ),
  },
  { $id: 'AlertSettingsPutRequest', additionalProperties: false },
);
export type AlertSettingsPutRequest = Static<typeof AlertSettingsPutRequestSchema>;

const MicroDzd = (description: string) => Type.String({ pattern: '^[0-9]+$', description });
const Dzd = (description: string) => Type.Number({ description });
const Time = Type.String({ format: 'date-time' });

export const AlertSettingsViewSchema = Type.Object(
  {
    object: Type.Literal('alert_settings'),
    account_id: Type.String(),
    url: Type.String(),
    enabled: Type.Boolean(),
    balance_below_dzd: Type.Union([Dzd('DZD, display only.'), Type.Null()]),
    balance_below_micro_dzd: Type.Union([MicroDzd('Exact µDZD.'), Type.Null()]),
    budget_thresholds_percent: Type.Array(Threshold),
    exhaustion_hours: Type.Union([Hours, Type.Null()]),
    updated_at: Time,
  },
  { $id: 'AlertSettingsView' },
);
export type AlertSettingsView = Static<typeof AlertSettingsViewSchema>;

/* The `data` of each alert webhook (snake_case, amounts as DZD numbers and exact µDZD strings). */

const common = {
  event_id: Type.String({ description: 'The alert’s id, also `webhook-id`: deduplicate on it.' }),
  account_id: Type.String(),
};

export const BalanceLowDataSchema = Type.Object({
  ...common,
  balance_dzd: Dzd('Available balance (credits − debits − pending holds).'),
  balance_micro_dzd: MicroDzd('Exact µDZD.'),
  threshold_dzd: Dzd('The configured threshold.'),
  threshold_micro_dzd: MicroDzd('Exact µDZD.'),
});

export const BudgetThresholdDataSchema = Type.Object({
  ...common,
  budget: Type.Object({
    applies_to: StringEnum(['api_key', 'scoped_token'] as const),
    owner: Type.String({ description: "The key's name or the token's id." }),
    period: Type.String(),
    time_zone: Type.String(),
  }),
  threshold_percent: Threshold,
  used_dzd: Dzd('Spent + reserved in the window.'),
  used_micro_dzd: MicroDzd('Exact µDZD.'),
  limit_dzd: Dzd('The cap per window.'),
  limit_micro_dzd: MicroDzd('Exact µDZD.'),
  window_start: Time,
  resets_at: Type.Union([Time, Type.Null()], { description: 'null for `total`.' }),
});

export const ExhaustionProjectedDataSchema = Type.Object({
  ...common,
  balance_dzd: Dzd('Available balance.'),
  balance_micro_dzd: MicroDzd('Exact µDZD.'),
  spend_rate_dzd_per_hour: Dzd('Settled cost of the last hour.'),
  spend_rate_micro_dzd_per_hour: MicroDzd('Exact µDZD.'),
  projected_hours: Type.Number({ minimum: 0, description: 'balance ÷ spend rate.' }),
  threshold_hours: Hours,
});

export type BalanceLowData = Static<typeof BalanceLowDataSchema>;
export type BudgetThresholdData = Static<typeof BudgetThresholdDataSchema>;
export type ExhaustionProjectedData = Static<typeof ExhaustionProjectedDataSchema>;

export interface AlertDataByType {
  'balance.low': BalanceLowData;
  'budget.threshold': BudgetThresholdData;
  'balance.exhaustion_projected': ExhaustionProjectedData;
}

export const AlertDataSchema = Type.Union([
  BalanceLowDataSchema,
  BudgetThresholdDataSchema,
  ExhaustionProjectedDataSchema,
]);
export type AlertData = Static<typeof AlertDataSchema>;

/** The webhook body, in the Standard Webhooks shape. */
export const AlertWebhookBodySchema = Type.Object(
  {
    type: StringEnum(ALERT_TYPES),
    timestamp: Time,
    data: AlertDataSchema,
  },
  { $id: 'AlertWebhookBody' },
);
export type AlertWebhookBody = Static<typeof AlertWebhookBodySchema>;
