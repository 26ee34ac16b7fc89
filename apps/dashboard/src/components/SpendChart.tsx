import { BarChart } from '@mantine/charts';
import { Paper, Text, Title } from '@mantine/core';
import { formatDay, formatDzd } from '../format';
import { stackByModel, useDailySpend, USAGE_DAYS } from '../usage/daily-spend';
import { EmptyState, QueryState } from './QueryState';

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

/** Spend per day, stacked by model (Mantine's charts over Recharts). */
export function SpendChart() {
  const usage = useDailySpend();
  return (
    <Paper withBorder p="md" radius="md">
      <Title order={4}>Spend per day</Title>
      <Text size="sm" c="dimmed" mb="md">
        Last {USAGE_DAYS} days (UTC days), by model
      </Text>
      <QueryState query={usage}>
        {(rows) => {
          if (rows === null) {
            return (
              <EmptyState title="Daily usage is not available yet">
                The chart of spend per day and model comes with usage records. Your balance and
                spend above are up to date.
              </EmptyState>
            );
          }
          if (rows.length === 0) {
            return (
              <EmptyState title="No usage yet">
                Requests you make with your API keys appear here, day by day and model by model.
              </EmptyState>
            );
          }
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
              series={models.map((name, index) => ({
                name,
                color: COLORS[index % COLORS.length]!,
              }))}
            />
          );
        }}
      </QueryState>
    </Paper>
  );
}
