import {
  Alert,
  Badge,
  Button,
  Code,
  Group,
  Paper,
  SegmentedControl,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { modals } from '@mantine/modals';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import type { DashboardWebhookRotation } from '../api/contract';
import {
  useDeliveries,
  useRevealSecrets,
  useRotateSecret,
  useSaveWebhookSettings,
  useWebhookSecrets,
  useWebhookSettings,
} from '../api/owner-queries';
import { ListTable } from '../components/ListTable';
import { DeliveriesTable } from '../components/DeliveriesTable';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, ErrorAlert, QueryState } from '../components/QueryState';
import { SecretOnce } from '../components/SecretOnce';
import { formatDateTime } from '../format';

function Secrets() {
  const secrets = useWebhookSecrets();
  const reveal = useRevealSecrets();
  const rotate = useRotateSecret();
  const [rotation, setRotation] = useState<DashboardWebhookRotation | null>(null);
  const shown = new Map(reveal.data?.data.map((s) => [s.id, s.secret]) ?? []);
  const confirmRotate = () =>
    modals.openConfirmModal({
      title: 'Rotate the signing secret?',
      children: (
        <Text size="sm">
          A new secret signs every delivery from now on. The current one keeps signing beside it
          until the rotation window ends, so you can update your receiver.
        </Text>
      ),
      labels: { confirm: 'Rotate', cancel: 'Cancel' },
      confirmProps: { color: 'orange' },
      onConfirm: () => rotate.mutate(undefined, { onSuccess: setRotation }),
    });
  return (
    <Paper withBorder radius="md" p="md">
      <Group justify="space-between" mb="sm">
        <Title order={4}>Signing secrets</Title>
        <Group gap="xs">
          {reveal.data === undefined ? (
            <Button
              size="xs"
              variant="default"
              loading={reveal.isPending}
              onClick={() => reveal.mutate(undefined)}
            >
              Reveal
            </Button>
          ) : (
            <Button size="xs" variant="default" onClick={() => reveal.reset()}>
              Hide
            </Button>
          )}
          <Button size="xs" color="orange" loading={rotate.isPending} onClick={confirmRotate}>
            Rotate
          </Button>
        </Group>
      </Group>
      <ErrorAlert error={reveal.error ?? rotate.error} />
      {rotation !== null && (
        <Stack gap="sm" mb="md" data-testid="rotation">
          {rotation.previous_expires_at !== null && (
            <Alert color="blue" title="Rotated">
              The previous secret keeps signing until{' '}
              <b data-testid="previous-expires-at">
                {formatDateTime(rotation.previous_expires_at)}
              </b>
              .
            </Alert>
          )}
          <SecretOnce
            label="secret"
            value={rotation.secret.secret}
            notice="Give this secret to your webhook receiver now. While it signs, Reveal shows it again here."
            onDone={() => setRotation(null)}
          />
        </Stack>
      )}
      <QueryState query={secrets}>
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No signing secret yet">
              Rotate to create one; deliveries are signed with it.
            </EmptyState>
          ) : (
            <ListTable headers={['Secret', 'Created', 'Signs until']} minWidthPx={560}>
              {data.map((secret) => (
                <Table.Tr key={secret.id} data-testid={`secret-${secret.id}`}>
                  <Table.Td>
                    {shown.has(secret.id) ? (
                      <Code data-testid="revealed-secret" style={{ wordBreak: 'break-all' }}>
                        {shown.get(secret.id)}
                      </Code>
                    ) : (
                      <Text ff="monospace" fz="sm">
                        {'•'.repeat(24)}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{formatDateTime(secret.created_at)}</Table.Td>
                  <Table.Td>
                    {secret.expires_at === null ? (
                      <Badge color="teal" variant="light">
                        current
                      </Badge>
                    ) : (
                      formatDateTime(secret.expires_at)
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </ListTable>
          )
        }
      </QueryState>
    </Paper>
  );
}

function Format() {
  const settings = useWebhookSettings();
  const save = useSaveWebhookSettings();
  return (
    <Paper withBorder radius="md" p="md">
      <Title order={4}>Payload format</Title>
      <Text size="sm" c="dimmed" mb="sm">
        How job results are posted to your webhook URL.
      </Text>
      <QueryState query={settings}>
        {({ webhook_format }) => (
          <Group>
            <SegmentedControl
              aria-label="Webhook format"
              value={webhook_format}
              disabled={save.isPending}
              data={[
                { value: 'A', label: 'Format A' },
                { value: 'B', label: 'Format B' },
              ]}
              onChange={(value) =>
                save.mutate(
                  { webhook_format: value as 'A' | 'B' },
                  {
                    onSuccess: () =>
                      notifications.show({ color: 'teal', message: 'Format saved.' }),
                  },
                )
              }
            />
          </Group>
        )}
      </QueryState>
      <ErrorAlert error={save.error} />
    </Paper>
  );
}

export function WebhooksPage() {
  const deliveries = useDeliveries();
  return (
    <>
      <PageTitle title="Webhooks" description="Signing secrets, payload format and deliveries." />
      <Stack gap="md">
        <Secrets />
        <Format />
        <Paper withBorder radius="md" p="md">
          <Title order={4} mb="sm">
            Deliveries
          </Title>
          <DeliveriesTable deliveries={deliveries} />
        </Paper>
      </Stack>
    </>
  );
}
