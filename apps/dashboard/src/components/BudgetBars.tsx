import { Anchor, Badge, Group, Paper, Progress, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { useBudgets } from '../api/budget-queries';
import type { BudgetPeriod, BudgetView } from '../api/contract';
import { formatDateTime, formatMicroDzd } from '../format';
import { EmptyState, QueryState } from './QueryState';

export const PERIOD_LABELS: Record<BudgetPeriod, string> = {
  day: 'per day',
  week: 'per week',
  month: 'per month',
  total: 'in total',
};

/** `part` of `whole` in percent (0–100), from the exact µDZD strings. */
function percentOf(part: string, whole: string): number {
  const limit = BigInt(whole);
  if (limit <= 0n) return 100;
  const hundredths = (BigInt(part) * 10_000n) / limit;
  return Math.min(100, Number(hundredths) / 100);
}

/** Green while there is room, orange from 80 %, red when nothing is left. */
function spentColor(used: number): string {
  if (used >= 100) return 'red';
  return used >= 80 ? 'orange' : 'teal';
}

export const budgetName = (budget: BudgetView): string =>
  budget.applies_to === 'api_key' ? `Key “${budget.owner}”` : `Token ${budget.owner}`;

function Figure({ label, micro, testId }: { label: string; micro: string; testId: string }) {
  return (
    <Text size="sm" span>
      <Text span c="dimmed">
        {label}{' '}
      </Text>
      <Text span fw={600} data-testid={testId}>
        {formatMicroDzd(micro)}
      </Text>
    </Text>
  );
}

/**
 * One budget: a bar of what settled (spent) and what pending requests hold (reserved) against
 * the limit, with the exact figures and when the window resets.
 */
export function BudgetBar({ budget, actions }: { budget: BudgetView; actions?: ReactNode }) {
  const spent = percentOf(budget.spent_micro_dzd, budget.limit_micro_dzd);
  const reserved = Math.min(
    100 - spent,
    percentOf(budget.reserved_micro_dzd, budget.limit_micro_dzd),
  );
  const used = spent + reserved;
  return (
    <Stack gap={6} data-testid={`budget-${budget.applies_to}-${budget.owner}`}>
      <Group justify="space-between" gap="xs">
        <Group gap="xs">
          <Text fw={600}>{budgetName(budget)}</Text>
          <Badge variant="light" color="gray">
            {formatMicroDzd(budget.limit_micro_dzd)} {PERIOD_LABELS[budget.period]}
          </Badge>
          {budget.period !== 'total' && (
            <Text size="xs" c="dimmed">
              {budget.time_zone}
            </Text>
          )}
        </Group>
        {actions}
      </Group>
      <Progress.Root size="lg" aria-label={`${budgetName(budget)}: ${Math.round(used)} % used`}>
        <Progress.Section value={spent} color={spentColor(used)} aria-label="Spent" />
        <Progress.Section value={reserved} color="yellow" striped aria-label="Reserved" />
      </Progress.Root>
      <Group gap="md" wrap="wrap">
        <Figure label="Spent" micro={budget.spent_micro_dzd} testId="budget-spent" />
        <Figure label="Reserved" micro={budget.reserved_micro_dzd} testId="budget-reserved" />
        <Figure label="Remaining" micro={budget.remaining_micro_dzd} testId="budget-remaining" />
        <Text size="sm" c="dimmed" data-testid="budget-resets">
          {budget.resets_at === null
            ? 'Never resets'
            : `Resets ${formatDateTime(budget.resets_at)}`}
        </Text>
      </Group>
    </Stack>
  );
}

/** Every budget of a list, each with its own actions (operators: edit, remove). */
export function BudgetBars({
  budgets,
  actions,
}: {
  budgets: readonly BudgetView[];
  actions?: (budget: BudgetView) => ReactNode;
}) {
  return (
    <Stack gap="lg">
      {budgets.map((budget) => (
        <BudgetBar
          key={`${budget.applies_to}-${budget.owner}`}
          budget={budget}
          actions={actions?.(budget)}
        />
      ))}
    </Stack>
  );
}

/** The owner's usage page: the account's budgets against their spend. */
export function OwnBudgets() {
  const budgets = useBudgets(null);
  return (
    <Paper withBorder radius="md" p="md" mb="md">
      <Title order={4}>Budgets</Title>
      <Text size="xs" c="dimmed" mb="sm">
        Spent settles when a request ends; reserved is held by requests still running.
      </Text>
      <QueryState query={budgets}>
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No budgets">
              Cap a key's spend per day, week or month on the{' '}
              <Anchor component={Link} to="/api-keys">
                API keys
              </Anchor>{' '}
              page.
            </EmptyState>
          ) : (
            <BudgetBars budgets={data} />
          )
        }
      </QueryState>
    </Paper>
  );
}
