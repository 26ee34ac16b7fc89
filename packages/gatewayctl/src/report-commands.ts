import {
  OPERATOR_ROUTES as R,
  type ClosedPeriod,
  type PeriodCloseRequest,
  type PeriodReport,
} from '@gateway/contracts';
import { arg, option, type Command } from './commands.js';
import { EXIT } from './errors.js';
import { show, table } from './output.js';
import { saveText } from './save-text.js';

/** The human form: the checks first (what finance must see), then the three tables. */
function render(report: PeriodReport): string {
  const { period, checks } = report;
  const failed = Object.entries(checks).filter(([, ok]) => !ok);
  const lines = [
    `period ${period.from} to ${period.to} (${period.time_zone}): ${period.starts_at} to ${period.ends_at}`,
    failed.length === 0
      ? 'checks: every identity holds'
      : `CHECKS FAILED: ${failed.map(([name]) => name).join(', ')}`,
    '',
    'trial balance (DZD)',
    table(
      [...report.trial_balance.lines, { ledger_account: 'total', ...report.trial_balance.totals }],
      ['ledger_account', 'opening_dzd', 'debits_dzd', 'credits_dzd', 'closing_dzd'],
    ),
    "customers' liability (DZD)",
    table(
      [{ account_id: 'total', ...report.customer_liability.total }],
      [
        'account_id',
        'opening_dzd',
        'credits_dzd',
        'usage_dzd',
        'refunds_dzd',
        'adjustments_dzd',
        'closing_dzd',
        'difference_dzd',
      ],
    ),
    'revenue by model (DZD)',
    table(report.revenue.by_model, ['model', 'charged_dzd', 'refunded_dzd', 'net_dzd']),
    `open holds at the end: ${report.open_holds.count} (${report.open_holds.reserved_dzd} DZD reserved)`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Finance's period report (the month-end close). */
export const REPORT_COMMANDS: Record<string, Command> = {
  report: {
    usage:
      'report <from YYYY-MM-DD> <to YYYY-MM-DD> [--time-zone ZONE] ' +
      '[--csv roll_forward|trial_balance|revenue --out FILE.csv]',
    async run(ctx) {
      const query = new URLSearchParams({ from: arg(ctx, 0, 'from'), to: arg(ctx, 1, 'to') });
      const zone = option(ctx, 'time-zone');
      if (zone) query.set('time_zone', zone);
      const section = option(ctx, 'csv');
      if (section === undefined) {
        const body = await ctx.client.call(R.ledgerReport, { query });
        show(ctx.out, body, () => render(body));
        const allHold = Object.values(body.checks).every(Boolean);
        return allHold ? EXIT.ok : EXIT.violations;
      }
      query.set('section', section);
      const text = await ctx.client.callText(R.ledgerReport, {
        query,
        headers: { Accept: 'text/csv' },
      });
      await saveText(ctx.out, option(ctx, 'out'), text, 'report');
    },
  },
};

const periodRow = (p: ClosedPeriod) => ({
  period: p.period,
  time_zone: p.time_zone,
  entries: p.entries_count,
  closing_liability_dzd: p.report.customer_liability.total.closing_dzd,
  net_revenue_dzd: p.report.revenue.total.net_dzd,
  closed_at: p.closed_at,
  closed_by: p.closed_by,
});
const PERIOD_COLUMNS = [
  'period',
  'time_zone',
  'entries',
  'closing_liability_dzd',
  'net_revenue_dzd',
  'closed_at',
  'closed_by',
];

/** Closed periods: the month-end close. */
export const PERIOD_COMMANDS: Record<string, Command> = {
  periods: {
    usage: 'periods',
    async run(ctx) {
      const body = await ctx.client.call(R.closedPeriods, {});
      show(ctx.out, body, () => table(body.data.map(periodRow), PERIOD_COLUMNS));
    },
  },
  'periods close': {
    usage: 'periods close <YYYY-MM> [--time-zone ZONE] [--by NAME]',
    async run(ctx) {
      const period = arg(ctx, 0, 'period');
      const body: PeriodCloseRequest = {
        ...(option(ctx, 'time-zone') ? { time_zone: option(ctx, 'time-zone')! } : {}),
        ...(option(ctx, 'by') ? { closed_by: option(ctx, 'by')! } : {}),
      };
      const closed = await ctx.client.call(R.closePeriod, { params: { period }, body });
      show(ctx.out, closed, () => table([periodRow(closed)], PERIOD_COLUMNS));
    },
  },
};
