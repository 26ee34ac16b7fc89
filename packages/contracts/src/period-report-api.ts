import { Type } from '@sinclair/typebox';
import type { Static, TNumber, TSchema, TString } from '@sinclair/typebox';
import { StringEnum } from './schemas/common.js';

/*
 * Finance's period report (`GET /admin/v1/ledger/report?from=&to=&time_zone=`): the month-end
 * close from the ledger. A period is whole local days [`from` 00:00, the day after `to` 00:00)
 * in `time_zone`. Every amount is exact µDZD as a signed digit string, with a DZD number beside it
 * for display; every identity the report states is checked in the answer, its difference shown.
 */

/** At most this many days per report (a year, leap years included). */
export const REPORT_MAX_DAYS = 366;
/** Customer accounts per page of the roll-forward. */
export const REPORT_ACCOUNTS_PAGE_MAX = 1000;
/** `?section=` of the CSV form: one table per download. */
export const REPORT_CSV_SECTIONS = ['roll_forward', 'trial_balance', 'revenue'] as const;
export type ReportCsvSection = (typeof REPORT_CSV_SECTIONS)[number];

const Micro = (description?: string) =>
  Type.String({ pattern: '^-?[0-9]+$', ...(description ? { description } : {}) });
const Dzd = Type.Number();

type Amounts<K extends string> = { [P in `${K}_micro_dzd`]: TString } & {
  [P in `${K}_dzd`]: TNumber;
};

/** A `…_micro_dzd` digit string and its `…_dzd` number, for each name. */
function amounts<const K extends string>(names: readonly K[]): Amounts<K> {
  const fields: Record<string, TSchema> = {};
  for (const name of names) {
    fields[`${name}_micro_dzd`] = Micro();
    fields[`${name}_dzd`] = Dzd;
  }
  return fields as Amounts<K>;
}

const TrialBalanceLineSchema = Type.Object({
  ledger_account: Type.String({
    description: '`system:funding`, `system:revenue`, …, or `customers` (every customer account).',
  }),
  ...amounts(['opening', 'debits', 'credits', 'closing'] as const),
});

/** The roll-forward's amounts, in the order of its identity (and of the CSV's columns). */
export const ROLL_FORWARD_AMOUNTS = [
  'opening',
  'credits',
  'usage',
  'refunds',
  'adjustments',
  'closing',
  'difference',
] as const;

const RollForwardFields = amounts(ROLL_FORWARD_AMOUNTS);

const RollForwardLineSchema = Type.Object({
  account_id: Type.String(),
  name: Type.String(),
  status: Type.String({ description: '`active` or `suspended` now.' }),
  ...RollForwardFields,
});

const RevenueFields = amounts(['charged', 'refunded', 'net'] as const);
const RevenueLineSchema = Type.Object({
  day: Type.String({ description: 'Local date in the time zone.' }),
  model: Type.String(),
  tier: StringEnum(['default', 'priority'] as const),
  settlements: Type.Integer(),
  refunds: Type.Integer(),
  ...RevenueFields,
});

export const PeriodReportSchema = Type.Object(
  {
    object: Type.Literal('ledger_report'),
    period: Type.Object({
      from: Type.String({ format: 'date' }),
      to: Type.String({ format: 'date', description: 'Inclusive.' }),
      time_zone: Type.String(),
      starts_at: Type.String({ format: 'date-time' }),
      ends_at: Type.String({ format: 'date-time', description: 'Exclusive.' }),
    }),
    trial_balance: Type.Object({
      lines: Type.Array(TrialBalanceLineSchema),
      totals: Type.Object(amounts(['opening', 'debits', 'credits', 'closing'] as const)),
    }),
    customer_liability: Type.Object({
      total: Type.Object(RollForwardFields, {
        description: 'opening + credits − usage + refunds + adjustments = closing (+ difference).',
      }),
      accounts: Type.Array(RollForwardLineSchema, { description: 'Paged by account id.' }),
      next_cursor: Type.Union([Type.String(), Type.Null()]),
    }),
    revenue: Type.Object({
      lines: Type.Array(RevenueLineSchema),
      by_day: Type.Array(Type.Object({ day: Type.String(), ...RevenueFields })),
      by_model: Type.Array(Type.Object({ model: Type.String(), ...RevenueFields })),
      by_tier: Type.Array(
        Type.Object({ tier: StringEnum(['default', 'priority'] as const), ...RevenueFields }),
      ),
      total: Type.Object(RevenueFields),
    }),
    open_holds: Type.Object({
      count: Type.Integer({ description: 'Holds placed before the end and still open at it.' }),
      ...amounts(['reserved'] as const),
    }),
    checks: Type.Object(
      {
        trial_balance_sums_to_zero: Type.Boolean(),
        roll_forward_holds: Type.Boolean({
          description: 'In total and on every account of this page.',
        }),
        liability_equals_customers_line: Type.Boolean(),
        revenue_equals_revenue_account: Type.Boolean(),
      },
      { description: 'Each identity the report states; false shows a difference, never hidden.' },
    ),
  },
  { $id: 'PeriodReport' },
);
export type PeriodReport = Static<typeof PeriodReportSchema>;

/** `POST /admin/v1/ledger/periods/{yyyy-mm}/close`: who closes, and in which zone (default the business's). */
export const PeriodCloseRequestSchema = Type.Object(
  {
    time_zone: Type.Optional(Type.String({ maxLength: 64 })),
    closed_by: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'Who closed it (a name or email).',
      }),
    ),
  },
  { $id: 'PeriodCloseRequest', additionalProperties: false },
);
export type PeriodCloseRequest = Static<typeof PeriodCloseRequestSchema>;

/**
 * A closed month: its report as it stood at the close (totals; the per-account lines are the
 * live report's, which the digest proves unchanged) and a SHA-256 of the entries it covered.
 */
export const ClosedPeriodSchema = Type.Object(
  {
    object: Type.Literal('ledger_period'),
    period: Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' }),
    time_zone: Type.String(),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    entries_count: Type.Integer({ minimum: 0 }),
    entries_digest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    closed_at: Type.String({ format: 'date-time' }),
    closed_by: Type.String(),
    report: PeriodReportSchema,
  },
  { $id: 'ClosedPeriod' },
);
export type ClosedPeriod = Static<typeof ClosedPeriodSchema>;

export const ClosedPeriodListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    // Optional: a billing of the previous release does not send it (the dashboard then uses UTC).
    time_zone: Type.Optional(
      Type.String({
        description:
          "The business's zone (billing's `REPORT_TIME_ZONE`): where a month of the books " +
          'begins and ends, unless a close names another.',
      }),
    ),
    data: Type.Array(ClosedPeriodSchema),
  },
  { $id: 'ClosedPeriodList' },
);
export type ClosedPeriodList = Static<typeof ClosedPeriodListSchema>;
