import { Button, Group, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { useKeyRateLimits } from '../api/key-limit-queries';
import { errorMessage } from '../api/messages';
import type { KeyRateLimitView } from '../api/contract';
import {
  limitsText,
  RateLimitModal,
  useConfirmRemoveRateLimit,
  type RateLimitEdit,
} from './RateLimitModal';

/** The owner's keys' own limits by key name; null until known. */
export function useKeyLimits(): Map<string, KeyRateLimitView> | null {
  const { data } = useKeyRateLimits(null);
  if (data === undefined) return null;
  return new Map(
    data.data.filter((view) => view.applies_to === 'api_key').map((view) => [view.owner, view]),
  );
}

/**
 * The rate-limit cell of a key's row (owners limit their own keys): its requests and tokens per
 * minute, or the account's limit alone, and set, edit or remove.
 */
export function KeyRateLimit({
  name,
  limits,
}: {
  name: string;
  limits: Map<string, KeyRateLimitView> | null;
}) {
  // Not loaded (or refused): show nothing rather than an "Account's limit" that may be wrong.
  if (limits === null) return <Text c="dimmed">—</Text>;
  return <KeyRateLimitCell name={name} limit={limits.get(name)} />;
}

function KeyRateLimitCell({ name, limit }: { name: string; limit: KeyRateLimitView | undefined }) {
  const [edit, setEdit] = useState<RateLimitEdit | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const confirmRemove = useConfirmRemoveRateLimit(setFailure);
  const target = { account: null, kind: 'api_key' as const, owner: name };
  return (
    <Stack gap={4} data-testid="key-rate-limit">
      <Text size="sm" c={limit === undefined ? 'dimmed' : undefined}>
        {limit === undefined ? "Account's limit" : limitsText(limit)}
      </Text>
      <Group gap={4} wrap="nowrap">
        <Button
          size="compact-xs"
          variant="subtle"
          onClick={() => setEdit({ target, current: limit })}
        >
          {limit === undefined ? 'Set rate limit' : 'Edit rate limit'}
        </Button>
        {limit !== undefined && (
          <Button
            size="compact-xs"
            variant="subtle"
            color="red"
            onClick={() => confirmRemove(target)}
          >
            Remove rate limit
          </Button>
        )}
      </Group>
      {failure !== null && (
        <Text size="xs" c="red" role="alert">
          {errorMessage(failure)}
        </Text>
      )}
      <RateLimitModal edit={edit} onClose={() => setEdit(null)} />
    </Stack>
  );
}
