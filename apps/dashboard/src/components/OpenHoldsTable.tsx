import { Badge, Table, Text } from '@mantine/core';
import type { OpenHold } from '../api/contract';
import { useOpenHolds } from '../api/operator-queries';
import { formatDateTime, formatMicroDzd } from '../format';
import { ListTable } from './ListTable';
import { EmptyState, QueryState } from './QueryState';

function HoldRow({ hold }: { hold: OpenHold }) {
  return (
    <Table.Tr>
      <Table.Td ff="monospace" fz="xs">
        {hold.hold_id}
      </Table.Td>
      <Table.Td fz="xs">{hold.model}</Table.Td>
      <Table.Td ta="right">{formatMicroDzd(hold.amount_micro_dzd)}</Table.Td>
      <Table.Td>
        {hold.published ? (
          <Badge variant="light">queued</Badge>
        ) : (
          <Badge variant="light" color="yellow">
            not queued
          </Badge>
        )}
      </Table.Td>
      <Table.Td>{formatDateTime(hold.created_at)}</Table.Td>
      <Table.Td>{formatDateTime(hold.expires_at)}</Table.Td>
    </Table.Tr>
  );
}

/**
 * What an account's reserved total is made of: its open holds, oldest first (a hold that stays
 * open is a stuck request; the sweeper releases it at its expiry). Read when its tab is opened.
 */
export function OpenHoldsTable({ accountId }: { accountId: string }) {
  const holds = useOpenHolds(accountId);
  return (
    <QueryState query={holds}>
      {(list) =>
        list.data.length === 0 ? (
          <EmptyState title="No open holds">Nothing is reserved for a running request.</EmptyState>
        ) : (
          <>
            <ListTable
              headers={['Hold', 'Model', 'Reserved', 'Job', 'Placed', 'Released at']}
              minWidthPx={760}
            >
              {list.data.map((hold) => (
                <HoldRow key={hold.hold_id} hold={hold} />
              ))}
            </ListTable>
            <Text size="sm" c="dimmed" mt="xs">
              Reserved in all: {formatMicroDzd(list.reserved_micro_dzd)}
              {list.has_more ? ' (only the oldest holds are listed)' : ''}
            </Text>
          </>
        )
      }
    </QueryState>
  );
}
