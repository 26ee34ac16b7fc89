import { BarChart } from '@mantine/charts';
import type { PeriodReport } from '../api/contract';
import { formatDay, formatDzd } from '../format';

/** Net revenue per local day of the period (Mantine's BarChart over Recharts), lazily loaded. */
export default function RevenueBars({ days }: { days: PeriodReport['revenue']['by_day'] }) {
  const data = days.map((day) => ({ day: day.day, Net: day.net_dzd, Refunded: day.refunded_dzd }));
  return (
    <BarChart
      h={240}
      data={data}
      dataKey="day"
      maxBarWidth={40}
      withLegend
      legendProps={{ verticalAlign: 'bottom' }}
      xAxisProps={{ tickFormatter: (day: string) => formatDay(day) }}
      yAxisProps={{ width: 80 }}
      valueFormatter={formatDzd}
      series={[
        { name: 'Net', color: 'teal.6' },
        { name: 'Refunded', color: 'orange.6' },
      ]}
    />
  );
}
