import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/*
 * Reads the PromQL of the dashboard and the alert rules, and finds the metric names in it.
 * Not a PromQL parser: enough to find every series name in the expressions this project writes
 * (selectors, functions, aggregations with by/without, arithmetic, numbers, Grafana variables).
 */

export const DASHBOARD_FILE = 'infra/grafana/dashboards/inference-gateway.json';
export const ALERTS_FILE = 'infra/prometheus/alerts.yml';

/** PromQL words that are not metric names. */
// prettier-ignore
const KEYWORDS = new Set([
  // aggregations and their modifiers
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk',
  'topk', 'quantile', 'limitk', 'limit_ratio', 'by', 'without', 'on', 'ignoring', 'group_left',
  'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2',
  // functions
  'abs', 'absent', 'absent_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min',
  'day_of_month', 'day_of_week', 'day_of_year', 'days_in_month', 'delta', 'deriv', 'exp', 'floor',
  'histogram_quantile', 'holt_winters', 'hour', 'idelta', 'increase', 'irate', 'label_join',
  'label_replace', 'ln', 'log2', 'log10', 'minute', 'month', 'predict_linear', 'rate', 'resets',
  'round', 'scalar', 'sgn', 'sort', 'sort_desc', 'sqrt', 'time', 'timestamp', 'vector', 'year',
  'avg_over_time', 'min_over_time', 'max_over_time', 'sum_over_time', 'count_over_time',
  'quantile_over_time', 'stddev_over_time', 'stdvar_over_time', 'last_over_time',
  'present_over_time', 'inf', 'nan',
]);

/** The metric names an expression reads. */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // string literals
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // range and subquery durations, [$__rate_interval]
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1') // label lists
    .replace(/\$\w+/g, ''); // Grafana variables outside ranges
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = match[0];
    if (!KEYWORDS.has(word.toLowerCase())) names.add(word);
  }
  return [...names].sort();
}

export interface Expression {
  where: string;
  expr: string;
}

interface DashboardPanel {
  id?: number;
  type: string;
  title?: string;
  panels?: DashboardPanel[];
  targets?: { expr?: string; refId?: string }[];
  gridPos?: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
}

export function readDashboard(file = DASHBOARD_FILE): {
  uid: string;
  panels: DashboardPanel[];
} {
  return JSON.parse(readFileSync(file, 'utf8')) as { uid: string; panels: DashboardPanel[] };
}

/** Every panel, rows' nested panels included. */
export function allPanels(panels: DashboardPanel[]): DashboardPanel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

export function dashboardExpressions(file = DASHBOARD_FILE): Expression[] {
  return allPanels(readDashboard(file).panels).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `${file}: panel "${panel.title}" ${target.refId ?? ''}`.trim(),
      expr: target.expr ?? '',
    })),
  );
}

export interface AlertRule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function readAlertRules(file = ALERTS_FILE): { name: string; rules: AlertRule[] }[] {
  return (parse(readFileSync(file, 'utf8')) as { groups: { name: string; rules: AlertRule[] }[] })
    .groups;
}

export function alertExpressions(file = ALERTS_FILE): Expression[] {
  return readAlertRules(file).flatMap((group) =>
    group.rules.map((rule) => ({
      where: `${file}: ${rule.alert ?? rule.record}`,
      expr: rule.expr,
    })),
  );
}
