import { Center, Loader, Paper, Text, Title } from '@mantine/core';
import { lazy, Suspense } from 'react';
import { useDailySpend, USAGE_DAYS } from '../usage/daily-spend';
import { EmptyState, QueryState } from './QueryState';

// Recharts is the largest library here: loaded only when there is something to draw.
const SpendBars = lazy(() => import('./SpendBars'));

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
          return (
            <Suspense
              fallback={
                <Center h={280}>
                  <Loader aria-label="Loading" />
                </Center>
              }
            >
              <SpendBars rows={rows} />
            </Suspense>
          );
        }}
      </QueryState>
    </Paper>
  );
}
