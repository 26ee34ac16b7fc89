import { Modal, Text } from '@mantine/core';
import { modals } from '@mantine/modals';
import { notifications } from '@mantine/notifications';
import {
  useRemoveKeyRateLimit,
  useSetKeyRateLimit,
  type RateLimitTarget,
} from '../api/key-limit-queries';
import type { KeyRateLimitView } from '../api/contract';
import { formatCount } from '../format';
import { RateLimitForm, type RateLimitTargetDraft } from './RateLimitForm';

/** What the dialog edits: a known key or token (its limits, if any), or one to name (operators). */
export interface RateLimitEdit {
  target: RateLimitTargetDraft;
  current?: KeyRateLimitView;
}

export const rateLimitOwnerName = (kind: KeyRateLimitView['applies_to'], owner: string): string =>
  kind === 'api_key' ? `key “${owner}”` : `token ${owner}`;

/** "60 requests/min · 10,000 tokens/min"; a missing one is left out. */
export function limitsText(view: KeyRateLimitView): string {
  const parts = [
    view.requests_per_minute === null
      ? null
      : `${formatCount(view.requests_per_minute)} requests/min`,
    view.tokens_per_minute === null ? null : `${formatCount(view.tokens_per_minute)} tokens/min`,
  ];
  return parts.filter((part) => part !== null).join(' · ');
}

const titleOf = ({ target }: RateLimitEdit): string =>
  target.owner === undefined || target.kind === undefined
    ? 'Set a rate limit'
    : `Rate limit of ${rateLimitOwnerName(target.kind, target.owner)}`;

const textOf = (value: number | null | undefined) => (value == null ? '' : String(value));

/** The set-a-rate-limit dialog; closes once saved. */
export function RateLimitModal({
  edit,
  onClose,
}: {
  edit: RateLimitEdit | null;
  onClose: () => void;
}) {
  const save = useSetKeyRateLimit();
  const close = () => {
    save.reset();
    onClose();
  };
  return (
    <Modal opened={edit !== null} onClose={close} title={edit === null ? '' : titleOf(edit)}>
      {edit !== null && (
        <RateLimitForm
          target={edit.target}
          initial={{
            requestsPerMinute: textOf(edit.current?.requests_per_minute),
            tokensPerMinute: textOf(edit.current?.tokens_per_minute),
          }}
          pending={save.isPending}
          error={save.error}
          onSubmit={(values) =>
            save.mutate(values, {
              onSuccess: () => {
                notifications.show({ color: 'teal', message: 'Rate limit saved.' });
                close();
              },
            })
          }
        />
      )}
    </Modal>
  );
}

/** "Remove rate limit" with a confirmation; `onError` shows a refusal. */
export function useConfirmRemoveRateLimit(onError: (error: unknown) => void) {
  const remove = useRemoveKeyRateLimit();
  return (target: RateLimitTarget) =>
    modals.openConfirmModal({
      title: `Remove the rate limit of ${rateLimitOwnerName(target.kind, target.owner)}?`,
      children: (
        <Text size="sm">
          From the next request only the account&apos;s limit (and its key&apos;s, for a token)
          applies.
        </Text>
      ),
      labels: { confirm: 'Remove rate limit', cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: () => remove.mutate(target, { onError }),
    });
}
