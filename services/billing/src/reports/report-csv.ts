/**
 * The period report as CSV, one table per download (`?section=`): the customers' roll-forward
 * (the default: what an accountant reconciles, one row per account and a total row), the trial
 * balance, or revenue by day, model and tier. Exact µDZD columns only (spreadsheets would round
 * the DZD numbers); the header says the unit.
 */
import { ROLL_FORWARD_AMOUNTS, type PeriodReport, type ReportCsvSection } from '@gateway/contracts';
import { csvField, csvRow, csvTextField } from '../ledger/csv.js';

type Row = Record<string, string | number>;

/** Names (accounts, models) are free text: guarded against spreadsheet formulas. Amounts are not. */
const TEXT_COLUMNS = new Set(['account_id', 'name', 'status', 'ledger_account', 'model']);

function table(columns: string[], rows: Row[]): string {
  const field = (column: string, value: string | number | undefined) =>
    TEXT_COLUMNS.has(column) ? csvTextField(String(value ?? '')) : csvField(String(value ?? ''));
  return [
    csvRow(columns),
    ...rows.map((row) => csvRow(columns.map((column) => field(column, row[column])))),
  ].join('');
}

const micro = (names: readonly string[]) => names.map((name) => `${name}_micro_dzd`);

export function reportCsv(report: PeriodReport, section: ReportCsvSection): string {
  if (section === 'trial_balance') {
    const columns = ['ledger_account', ...micro(['opening', 'debits', 'credits', 'closing'])];
    const totals = { ledger_account: 'total', ...report.trial_balance.totals };
    return table(columns, [...report.trial_balance.lines, totals]);
  }
  if (section === 'revenue') {
    const columns = [
      'day',
      'model',
      'tier',
      'settlements',
      'refunds',
      ...micro(['charged', 'refunded', 'net']),
    ];
    return table(columns, report.revenue.lines);
  }
  const columns = ['account_id', 'name', 'status', ...micro(ROLL_FORWARD_AMOUNTS)];
  const total = { account_id: 'total', name: '', status: '', ...report.customer_liability.total };
  return table(columns, [...report.customer_liability.accounts, total]);
}
