import { Button, Group, Paper, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useBudgets } from '../api/budget-queries';
import { BudgetBars } from './BudgetBars';
import { BudgetModal, useConfirmRemoveBudget, type BudgetEdit } from './BudgetModal';
import { EmptyState, ErrorAlert, QueryState } from './QueryState';

/**
 * An account's budgets on its detail page (operators): each with its spend; role `operator`
 * sets a key's or a scoped token's budget, edits or removes one (finance reads).
 */
export function AccountBudgets({ accountId, canWrite }: { accountId: string; canWrite: boolean }) {
  const budgets = useBudgets(accountId);
  const [edit, setEdit] = useState<BudgetEdit | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const confirmRemove = useConfirmRemoveBudget(setFailure);
  return (
    <Paper withBorder p="md" radius="md">
      <Group justify="space-between" mb="sm">
        <div>
          <Title order={4}>Budgets</Title>
          <Text size="xs" c="dimmed">
            A key's budget covers the scoped tokens it signs; a token can have its own too.
          </Text>
        </div>
        {canWrite && (
          <Button
            size="xs"
            variant="light"
            onClick={() => setEdit({ target: { account: accountId } })}
          >
            Set a budget
          </Button>
        )}
      </Group>
      <ErrorAlert error={failure} />
      <QueryState query={budgets}>
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No budgets">Spend is capped by the balance only.</EmptyState>
          ) : (
            <BudgetBars
              budgets={data}
              actions={(budget) => {
                if (!canWrite) return null;
                const target = { account: accountId, kind: budget.applies_to, owner: budget.owner };
                return (
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => setEdit({ target, current: budget })}
                    >
                      Edit
                    </Button>
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      onClick={() => confirmRemove(target, budget)}
                    >
                      Remove
                    </Button>
                  </Group>
                );
              }}
            />
          )
        }
      </QueryState>
      <BudgetModal edit={edit} onClose={() => setEdit(null)} />
    </Paper>
  );
}
