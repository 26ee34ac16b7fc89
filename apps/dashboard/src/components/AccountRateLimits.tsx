import { Button, Group, Paper, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useKeyRateLimits } from '../api/key-limit-queries';
import type { KeyRateLimitView } from '../api/contract';
import { formatCount } from '../format';
import { ListTable } from './ListTable';
import { EmptyState, ErrorAlert, QueryState } from './QueryState';
import { RateLimitModal, useConfirmRemoveRateLimit, type RateLimitEdit } from './RateLimitModal';

const perMinute = (value: number | null) => (value === null ? '—' : formatCount(value));

/**
 * An account's key and token rate limits on its detail page (operators): role `operator` sets
 * a key's or a scoped token's, edits or removes one (finance reads).
 */
export function AccountRateLimits({
  accountId,
  canWrite,
}: {
  accountId: string;
  canWrite: boolean;
}) {
  const limits = useKeyRateLimits(accountId);
  const [edit, setEdit] = useState<RateLimitEdit | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const confirmRemove = useConfirmRemoveRateLimit(setFailure);
  const targetOf = (view: KeyRateLimitView) => ({
    account: accountId,
    kind: view.applies_to,
    owner: view.owner,
  });
  return (
    <Paper withBorder p="md" radius="md">
      <Group justify="space-between" mb="sm">
        <div>
          <Title order={4}>Key and token rate limits</Title>
          <Text size="xs" c="dimmed">
            Beside the account&apos;s: a key&apos;s limits cover the scoped tokens it signs.
          </Text>
        </div>
        {canWrite && (
          <Button
            size="xs"
            variant="light"
            onClick={() => setEdit({ target: { account: accountId } })}
          >
            Set a rate limit
          </Button>
        )}
      </Group>
      <ErrorAlert error={failure} />
      <QueryState query={limits}>
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No key or token rate limits">
              The account&apos;s requests per minute applies alone.
            </EmptyState>
          ) : (
            <ListTable
              headers={['Key or token', 'Requests/min', 'Tokens/min', '']}
              minWidthPx={560}
            >
              {data.map((view) => (
                <Table.Tr
                  key={`${view.applies_to}-${view.owner}`}
                  data-testid={`rate-limit-${view.applies_to}-${view.owner}`}
                >
                  <Table.Td>
                    {view.applies_to === 'api_key' ? `Key “${view.owner}”` : `Token ${view.owner}`}
                  </Table.Td>
                  <Table.Td data-testid="rpm">{perMinute(view.requests_per_minute)}</Table.Td>
                  <Table.Td data-testid="tpm">{perMinute(view.tokens_per_minute)}</Table.Td>
                  <Table.Td>
                    {canWrite && (
                      <Group gap="xs" justify="flex-end" wrap="nowrap">
                        <Button
                          size="xs"
                          variant="default"
                          onClick={() => setEdit({ target: targetOf(view), current: view })}
                        >
                          Edit
                        </Button>
                        <Button
                          size="xs"
                          variant="subtle"
                          color="red"
                          onClick={() => confirmRemove(targetOf(view))}
                        >
                          Remove
                        </Button>
                      </Group>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </ListTable>
          )
        }
      </QueryState>
      <RateLimitModal edit={edit} onClose={() => setEdit(null)} />
    </Paper>
  );
}
