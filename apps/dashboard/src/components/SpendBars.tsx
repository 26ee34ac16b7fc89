import { BarChart } from '@mantine/charts';
import { formatDay, formatDzd } from '../format';
import { stackByModel, type DailySpendRow } from '../usage/daily-spend';

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
export default function SpendBars({ rows }: { rows: readonly DailySpendRow[] }) {
  const { data, models } = stackByModel(rows);
  return (
    <BarChart
      h={280}
      data={data}
      dataKey="day"
      type="stacked"
      withLegend
      xAxisProps={{ tickFormatter: (day: string) => formatDay(day) }}
      valueFormatter={formatDzd}
      series={models.map((name, index) => ({ name, color: COLORS[index % COLORS.length]! }))}
    />
  );
}
