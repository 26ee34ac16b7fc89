/**
 * The overview's chart: spend and tokens per UTC day and model, from the owner's usage route
 * (`GET /dashboard/api/usage?group_by=day,model`) over the last USAGE_DAYS days (usage records:
 * one per request, counted on the day its hold ended, like the statement's settlements).
 */
import { useQuery } from '@tanstack/react-query';
import { DASHBOARD_OWNER_ROUTES } from '@gateway/contracts/dashboard-owner-routes';
import { callRoute } from '../api/client';
import type { UsageGroup } from '../api/contract';

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

/** The last USAGE_DAYS UTC days, today included, oldest first (`YYYY-MM-DD`). */
export function recentUtcDays(nowMs = Date.now()): string[] {
  return Array.from({ length: USAGE_DAYS }, (_, i) =>
    new Date(nowMs - (USAGE_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
}

/** `group_by=day,model` groups as chart rows (both fields are always set for that grouping). */
export const toDailyRows = (groups: readonly UsageGroup[]): DailySpendRow[] =>
  groups.map((group) => ({
    day: group.day ?? '',
    model: group.model ?? '',
    cost_dzd: group.cost_dzd,
    prompt_tokens: group.prompt_tokens,
    completion_tokens: group.completion_tokens,
  }));

async function fetchDailySpend(): Promise<DailySpendRow[]> {
  const from = recentUtcDays()[0]!;
  const query = new URLSearchParams({ group_by: 'day,model', from });
  const list = await callRoute(DASHBOARD_OWNER_ROUTES.usage, { query });
  return toDailyRows(list.data);
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

/**
 * Rows (day × model) pivoted into one bar per day stacked by model, days in order; `allDays`
 * (e.g. the last 30) get a bar slot even without usage, so the axis spans the whole period.
 */
export function stackByModel(
  rows: readonly DailySpendRow[],
  metric: DailyMetric = 'cost',
  allDays: readonly string[] = [],
): StackedDays {
  const models = [...new Set(rows.map((row) => row.model))].sort();
  const days = new Map<string, Record<string, string | number>>(
    allDays.map((day) => [day, { day }]),
  );
  for (const row of rows) {
    const entry = days.get(row.day) ?? { day: row.day };
    entry[row.model] = Number(entry[row.model] ?? 0) + valueOf(row, metric);
    days.set(row.day, entry);
  }
  const data = [...days.values()].sort((a, b) => String(a.day).localeCompare(String(b.day)));
  return { data, models };
}
