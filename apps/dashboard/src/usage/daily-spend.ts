/**
 * The hook for the overview's chart: spend and tokens per UTC day and model.
 *
 * The usage API (issue 16, `GET /v1/usage?group_by=day|model|key`, and its dashboard twin) is
 * being built separately. When `/dashboard/api/usage` exists, fetch it in `fetchDailySpend`
 * (one row per day and model) and nothing else changes: the chart and its empty state read
 * `DailySpendRow[]`. Until then it answers null (no usage data on this gateway yet), and the
 * chart says so rather than "no usage".
 */
import { useQuery } from '@tanstack/react-query';

export interface DailySpendRow {
  /** UTC calendar day, `YYYY-MM-DD`. */
  day: string;
  model: string;
  cost_dzd: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export const USAGE_DAYS = 30;

async function fetchDailySpend(): Promise<DailySpendRow[] | null> {
  return null;
}

export const useDailySpend = () =>
  useQuery({ queryKey: ['usage', 'daily', USAGE_DAYS], queryFn: fetchDailySpend });

export interface StackedDays {
  /** One entry per day: `{ day, [model]: cost_dzd }`, ready for a stacked bar chart. */
  data: Record<string, string | number>[];
  models: string[];
}

/** Rows (day × model) pivoted into one bar per day stacked by model, days in order. */
export function stackByModel(rows: readonly DailySpendRow[]): StackedDays {
  const models = [...new Set(rows.map((row) => row.model))].sort();
  const days = new Map<string, Record<string, string | number>>();
  for (const row of rows) {
    const entry = days.get(row.day) ?? { day: row.day };
    entry[row.model] = Number(entry[row.model] ?? 0) + row.cost_dzd;
    days.set(row.day, entry);
  }
  const data = [...days.values()].sort((a, b) => String(a.day).localeCompare(String(b.day)));
  return { data, models };
}
