import { Button, Group, Progress, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { useBudgets } from '../api/budget-queries';
import { errorMessage } from '../api/messages';
import type { BudgetView } from '../api/contract';
import { formatMicroDzd } from '../format';
import { PERIOD_LABELS } from './BudgetBars';
import { BudgetModal, useConfirmRemoveBudget, type BudgetEdit } from './BudgetModal';

/** The owner's key budgets by key name (a key has at most one); null until known. */
export function useKeyBudgets(): Map<string, BudgetView> | null {
  const { data } = useBudgets(null);
  if (data === undefined) return null;
  return new Map(
    data.data
      .filter((budget) => budget.applies_to === 'api_key')
      .map((budget) => [budget.owner, budget]),
  );
}

const usedPercent = (budget: BudgetView): number => {
  const limit = BigInt(budget.limit_micro_dzd);
  const used = BigInt(budget.limit_micro_dzd) - BigInt(budget.remaining_micro_dzd);
  return limit === 0n ? 100 : Number((used * 100n) / limit);
};

/**
 * The budget cell of a key's row (owners cap their own keys): spent of the limit, a small bar,
 * and set, edit or remove.
 */
export function KeyBudget({
  name,
  budgets,
}: {
  name: string;
  budgets: Map<string, BudgetView> | null;
}) {
  // Not loaded (or refused): show nothing rather than a "No budget" that may be wrong.
  if (budgets === null) return <Text c="dimmed">—</Text>;
  return <KeyBudgetCell name={name} budget={budgets.get(name)} />;
}

function KeyBudgetCell({ name, budget }: { name: string; budget: BudgetView | undefined }) {
  const [edit, setEdit] = useState<BudgetEdit | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const confirmRemove = useConfirmRemoveBudget(setFailure);
  const target = { account: null, kind: 'api_key' as const, owner: name };
  return (
    <Stack gap={4} data-testid="key-budget">
      {budget === undefined ? (
        <Text size="sm" c="dimmed">
          No budget
        </Text>
      ) : (
        <>
          <Text size="sm">
            {formatMicroDzd(budget.spent_micro_dzd)} of {formatMicroDzd(budget.limit_micro_dzd)}{' '}
            {PERIOD_LABELS[budget.period]}
          </Text>
          <Progress
            size="sm"
            maw={220}
            value={usedPercent(budget)}
            aria-label={`Budget of ${name} used`}
          />
        </>
      )}
      <Group gap={4} wrap="nowrap">
        <Button
          size="compact-xs"
          variant="subtle"
          onClick={() => setEdit({ target, current: budget })}
        >
          {budget === undefined ? 'Set budget' : 'Edit budget'}
        </Button>
        {budget !== undefined && (
          <Button
            size="compact-xs"
            variant="subtle"
            color="red"
            onClick={() => confirmRemove(target, budget)}
          >
            Remove budget
          </Button>
        )}
      </Group>
      {failure !== null && (
        <Text size="xs" c="red" role="alert">
          {errorMessage(failure)}
        </Text>
      )}
      <BudgetModal edit={edit} onClose={() => setEdit(null)} />
    </Stack>
  );
}
