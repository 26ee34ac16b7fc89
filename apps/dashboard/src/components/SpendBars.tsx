import { BarChart } from '@mantine/charts';
import { formatCount, formatDay, formatDzd } from '../format';
import { stackByModel, type DailyMetric, type DailySpendRow } from '../usage/daily-spend';

const COLORS = [
  'teal.6',
  'blue.6',
  'grape.6',
  'orange.6',
  'cyan.6',
  'pink.6',
  'lime.6',
  'indigo.6',
];

/** The bars themselves (Mantine's BarChart over Recharts), in a chunk of their own. */
export default function SpendBars({
  rows,
  metric = 'cost',
  allDays,
}: {
  rows: readonly DailySpendRow[];
  metric?: DailyMetric;
  allDays?: readonly string[];
}) {
  const { data, models } = stackByModel(rows, metric, allDays);
  return (
    <BarChart
      h={280}
      data={data}
      dataKey="day"
      type="stacked"
      maxBarWidth={48}
      withLegend
      legendProps={{ verticalAlign: 'bottom' }}
      xAxisProps={{ tickFormatter: (day: string) => formatDay(day) }}
      yAxisProps={{ width: 80 }}
      valueFormatter={metric === 'cost' ? formatDzd : formatCount}
      series={models.map((name, index) => ({ name, color: COLORS[index % COLORS.length]! }))}
    />
  );
}
