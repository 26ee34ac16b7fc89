/**
 * The overview's chart: spend and tokens per UTC day and model, from
 * `GET /dashboard/api/usage?group_by=day,model` over the last USAGE_DAYS days (usage records:
 * one per request, counted on the day its hold ended, like the statement's settlements).
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import type { UsageList } from '../api/contract';

export interface DailySpendRow {
  /** UTC calendar day, `YYYY-MM-DD`. */
  day: string;
  model: string;
  cost_dzd: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export const USAGE_DAYS = 30;
const DAY_MS = 86_400_000;

async function fetchDailySpend(): Promise<DailySpendRow[]> {
  // From 00:00 UTC USAGE_DAYS − 1 days ago: whole UTC days, today included.
  const from = new Date(Date.now() - (USAGE_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  const list = await api<UsageList>('GET', `/usage?group_by=day,model&from=${from}`);
  return list.data.map((group) => ({
    day: group.day ?? '',
    model: group.model ?? '',
    cost_dzd: group.cost_dzd,
    prompt_tokens: group.prompt_tokens,
    completion_tokens: group.completion_tokens,
  }));
}

export const useDailySpend = () =>
  useQuery({ queryKey: ['usage', 'daily', USAGE_DAYS], queryFn: fetchDailySpend });

export type DailyMetric = 'cost' | 'tokens';

export interface StackedDays {
  /** One entry per day: `{ day, [model]: value }`, ready for a stacked bar chart. */
  data: Record<string, string | number>[];
  models: string[];
}

const valueOf = (row: DailySpendRow, metric: DailyMetric) =>
  metric === 'cost' ? row.cost_dzd : row.prompt_tokens + row.completion_tokens;

/** Rows (day × model) pivoted into one bar per day stacked by model, days in order. */
export function stackByModel(
  rows: readonly DailySpendRow[],
  metric: DailyMetric = 'cost',
): StackedDays {
  const models = [...new Set(rows.map((row) => row.model))].sort();
  const days = new Map<string, Record<string, string | number>>();
  for (const row of rows) {
    const entry = days.get(row.day) ?? { day: row.day };
    entry[row.model] = Number(entry[row.model] ?? 0) + valueOf(row, metric);
    days.set(row.day, entry);
  }
  const data = [...days.values()].sort((a, b) => String(a.day).localeCompare(String(b.day)));
  return { data, models };
}
