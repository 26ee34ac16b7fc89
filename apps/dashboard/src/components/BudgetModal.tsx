import { Modal, Text } from '@mantine/core';
import { modals } from '@mantine/modals';
import { notifications } from '@mantine/notifications';
import { useRemoveBudget, useSetBudget, type BudgetTarget } from '../api/budget-queries';
import type { BudgetView } from '../api/contract';
import { budgetName } from './BudgetBars';
import { BudgetForm, budgetInitial } from './BudgetForm';

/** What the dialog edits: a known key or token (its budget, if any), or one to name (operators). */
export interface BudgetEdit {
  target: Omit<BudgetTarget, 'owner' | 'kind'> & Partial<Pick<BudgetTarget, 'owner' | 'kind'>>;
  current?: BudgetView;
}

const titleOf = ({ target, current }: BudgetEdit): string => {
  if (current !== undefined) return `Budget of ${budgetName(current)}`;
  if (target.owner === undefined) return 'Set a budget';
  return target.kind === 'api_key'
    ? `Budget of key “${target.owner}”`
    : `Budget of ${target.owner}`;
};

/** The set-a-budget dialog; closes once saved. */
export function BudgetModal({ edit, onClose }: { edit: BudgetEdit | null; onClose: () => void }) {
  const save = useSetBudget();
  const close = () => {
    save.reset();
    onClose();
  };
  return (
    <Modal opened={edit !== null} onClose={close} title={edit === null ? '' : titleOf(edit)}>
      {edit !== null && (
        <BudgetForm
          target={edit.target}
          initial={edit.current === undefined ? undefined : budgetInitial(edit.current)}
          pending={save.isPending}
          error={save.error}
          onSubmit={(values) =>
            save.mutate(values, {
              onSuccess: () => {
                notifications.show({ color: 'teal', message: 'Budget saved.' });
                close();
              },
            })
          }
        />
      )}
    </Modal>
  );
}

/** "Remove budget" with a confirmation; `onError` shows a refusal. */
export function useConfirmRemoveBudget(onError: (error: unknown) => void) {
  const remove = useRemoveBudget();
  return (target: BudgetTarget, budget: BudgetView) =>
    modals.openConfirmModal({
      title: `Remove the budget of ${budgetName(budget)}?`,
      children: (
        <Text size="sm">
          Its spend is no longer capped from the next request (the balance still is).
        </Text>
      ),
      labels: { confirm: 'Remove budget', cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: () => remove.mutate(target, { onError }),
    });
}
