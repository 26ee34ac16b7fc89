import { Group, Paper, SegmentedControl, Text, Title } from '@mantine/core';
import { lazy, Suspense, useState, type ComponentProps } from 'react';
import { recentUtcDays, useDailySpend, USAGE_DAYS, type DailyMetric } from '../usage/daily-spend';
import { EmptyState, Loading, QueryState } from './QueryState';

// Recharts is the largest library here: loaded only when there is something to draw.
const SpendBars = lazy(() => import('./SpendBars'));

/** The stacked bars, with a loader of the chart's height while their chunk arrives. */
export function LazySpendBars(props: ComponentProps<typeof SpendBars>) {
  return (
    <Suspense fallback={<Loading h={280} />}>
      <SpendBars {...props} />
    </Suspense>
  );
}

/** Spend or tokens per day, stacked by model (Mantine's charts over Recharts). */
export function SpendChart() {
  const usage = useDailySpend();
  const [metric, setMetric] = useState<DailyMetric>('cost');
  return (
    <Paper withBorder p="md" radius="md" data-testid="usage-chart">
      <Group justify="space-between" align="flex-start" mb="md">
        <div>
          <Title order={4}>{metric === 'cost' ? 'Spend per day' : 'Tokens per day'}</Title>
          <Text size="sm" c="dimmed">
            Last {USAGE_DAYS} days (UTC days), by model
          </Text>
        </div>
        <SegmentedControl
          size="xs"
          aria-label="Chart metric"
          value={metric}
          onChange={(value) => setMetric(value as DailyMetric)}
          data={[
            { value: 'cost', label: 'Spend' },
            { value: 'tokens', label: 'Tokens' },
          ]}
        />
      </Group>
      <QueryState query={usage}>
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No usage yet">
              Requests you make with your API keys appear here, day by day and model by model.
            </EmptyState>
          ) : (
            <LazySpendBars rows={rows} metric={metric} allDays={recentUtcDays()} />
          )
        }
      </QueryState>
    </Paper>
  );
}
