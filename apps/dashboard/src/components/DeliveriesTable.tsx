import { Badge, Button, Table } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import type { DashboardWebhookDelivery } from '../api/contract';
import { useRedeliver } from '../api/owner-queries';
import type { usePages } from '../api/queries';
import { formatDateTime } from '../format';
import { ListTable } from './ListTable';
import { LoadMore } from './LoadMore';
import { EmptyState, QueryState } from './QueryState';

const STATUS_COLORS: Record<string, string> = { delivered: 'teal', failed: 'red', queued: 'blue' };

function RedeliverButton({ delivery }: { delivery: DashboardWebhookDelivery }) {
  const redeliver = useRedeliver();
  return (
    <Button
      size="xs"
      variant="default"
      disabled={delivery.next_attempt_at !== null}
      loading={redeliver.isPending}
      onClick={() =>
        redeliver.mutate(delivery.id, {
          onSuccess: () => notifications.show({ color: 'teal', message: 'Queued again.' }),
          onError: () => notifications.show({ color: 'red', message: 'Could not redeliver.' }),
        })
      }
    >
      Redeliver
    </Button>
  );
}

function DeliveryRow({
  delivery,
  canRedeliver,
}: {
  delivery: DashboardWebhookDelivery;
  canRedeliver: boolean;
}) {
  return (
    <Table.Tr>
      <Table.Td ff="monospace" fz="xs">
        {delivery.id}
      </Table.Td>
      <Table.Td ff="monospace" fz="xs">
        {delivery.job_id}
      </Table.Td>
      <Table.Td fz="xs">
        {delivery.event_type === 'inference.completed' ? 'job result' : delivery.event_type}
      </Table.Td>
      <Table.Td>
        <Badge variant="light" color={STATUS_COLORS[delivery.status] ?? 'gray'}>
          {delivery.status}
        </Badge>
      </Table.Td>
      <Table.Td>{delivery.attempts}</Table.Td>
      <Table.Td>{delivery.last_response_code ?? '—'}</Table.Td>
      <Table.Td>
        {delivery.next_attempt_at === null ? '—' : formatDateTime(delivery.next_attempt_at)}
      </Table.Td>
      <Table.Td>{formatDateTime(delivery.created_at)}</Table.Td>
      {canRedeliver && (
        <Table.Td>
          <RedeliverButton delivery={delivery} />
        </Table.Td>
      )}
    </Table.Tr>
  );
}

const DELIVERY_HEADERS = [
  'Delivery',
  'Job or alert',
  'Event',
  'Status',
  'Attempts',
  'Last code',
  'Next attempt',
  'Created',
];

/** The deliveries log; redelivery is the owner's (operators read). */
export function DeliveriesTable({
  deliveries,
  canRedeliver = true,
}: {
  deliveries: ReturnType<typeof usePages<DashboardWebhookDelivery>>;
  canRedeliver?: boolean;
}) {
  return (
    <>
      <QueryState query={deliveries}>
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No deliveries yet">
              Jobs with a webhook URL and account alerts are delivered here, signed with your
              secret.
            </EmptyState>
          ) : (
            <ListTable
              headers={canRedeliver ? [...DELIVERY_HEADERS, ''] : DELIVERY_HEADERS}
              minWidthPx={900}
            >
              {rows.map((delivery) => (
                <DeliveryRow key={delivery.id} delivery={delivery} canRedeliver={canRedeliver} />
              ))}
            </ListTable>
          )
        }
      </QueryState>
      <LoadMore query={deliveries} />
    </>
  );
}
