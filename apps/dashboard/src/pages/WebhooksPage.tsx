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
  useExpirePreviousSecret,
  useRevealSecrets,
  useRotateSecret,
  useSaveWebhookSettings,
  useWebhookSecrets,
  useWebhookSettings,
} from '../api/owner-queries';
import { ListTable } from '../components/ListTable';
import { AlertSettingsSection } from '../components/AlertSettingsForm';
import { DeliveriesTable } from '../components/DeliveriesTable';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, ErrorAlert, QueryState } from '../components/QueryState';
import { SecretOnce } from '../components/SecretOnce';
import { formatDateTime } from '../format';

function Secrets() {
  const secrets = useWebhookSecrets();
  const reveal = useRevealSecrets();
  const rotate = useRotateSecret();
  const expirePrevious = useExpirePreviousSecret();
  const [rotation, setRotation] = useState<DashboardWebhookRotation | null>(null);
  const shown = new Map(reveal.data?.data.map((s) => [s.id, s.secret]) ?? []);
  // At most two secrets sign: the current one and the previous one in its rotation window.
  const previous = secrets.data?.data.find((secret) => secret.expires_at !== null);
  const confirmRotate = () =>
    modals.openConfirmModal({
      title: 'Rotate the signing secret?',
      children: (
        <Stack gap="xs">
          <Text size="sm">
            A new secret signs every delivery from now on. The current one keeps signing beside it
            until the rotation window ends, so you can update your receiver.
          </Text>
          {previous?.expires_at && (
            <Text size="sm" data-testid="rotate-drops-previous">
              Only two secrets sign at a time: the previous secret, which would have signed until{' '}
              {formatDateTime(previous.expires_at)}, stops signing now.
            </Text>
          )}
        </Stack>
      ),
      labels: { confirm: 'Rotate', cancel: 'Cancel' },
      confirmProps: { color: 'orange' },
      onConfirm: () => rotate.mutate(undefined, { onSuccess: setRotation }),
    });
  const confirmExpirePrevious = () =>
    modals.openConfirmModal({
      title: 'Stop the previous secret now?',
      children: (
        <Text size="sm">
          The previous secret stops signing at once instead of at the end of its rotation window:
          from the next delivery attempt on, only the current secret signs. A receiver still
          verifying with the previous secret will reject deliveries. Do this once every receiver
          uses the current secret, or when the previous one may have leaked.
        </Text>
      ),
      labels: { confirm: 'Expire previous now', cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: () =>
        expirePrevious.mutate(undefined, {
          onSuccess: () => {
            // The revealed values and the rotation notice would show a secret that no longer signs.
            reveal.reset();
            setRotation((shownRotation) =>
              shownRotation === null ? null : { ...shownRotation, previous_expires_at: null },
            );
            notifications.show({ color: 'teal', message: 'The previous secret no longer signs.' });
          },
        }),
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
          {previous !== undefined && (
            <Button
              size="xs"
              color="red"
              variant="light"
              loading={expirePrevious.isPending}
              onClick={confirmExpirePrevious}
            >
              Expire previous now
            </Button>
          )}
          <Button size="xs" color="orange" loading={rotate.isPending} onClick={confirmRotate}>
            Rotate
          </Button>
        </Group>
      </Group>
      <ErrorAlert error={reveal.error ?? rotate.error ?? expirePrevious.error} />
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
      <PageTitle
        title="Webhooks"
        description="Signing secrets, payload format, account alerts and deliveries."
      />
      <Stack gap="md">
        <Secrets />
        <Format />
        <AlertSettingsSection />
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
