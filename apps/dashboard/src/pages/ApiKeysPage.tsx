import { Button, Group, Modal, Paper, Stack, Table, Text, TextInput } from '@mantine/core';
import { modals } from '@mantine/modals';
import { useState, type FormEvent } from 'react';
import type { DashboardIssuedApiKey } from '../api/contract';
import { useApiKeys, useCreateApiKey, useDeleteApiKey, useRegenerateApiKey } from '../api/queries';
import { KeyBudget, useKeyBudgets } from '../components/KeyBudget';
import { KeyRateLimit, useKeyLimits } from '../components/KeyRateLimit';
import { ListTable } from '../components/ListTable';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, ErrorAlert, QueryState } from '../components/QueryState';
import { SecretOnceModal } from '../components/SecretOnce';
import { formatDateTime } from '../format';

const NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

function CreateKeyForm({ onIssued }: { onIssued: (issued: DashboardIssuedApiKey) => void }) {
  const [name, setName] = useState('');
  const create = useCreateApiKey();
  const invalid = name !== '' && !NAME_PATTERN.test(name);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!NAME_PATTERN.test(name)) return;
    create.mutate(name, { onSuccess: onIssued });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="md">
        <TextInput
          label="Name"
          description="Letters, digits, dot, dash or underscore; up to 64."
          data-autofocus
          value={name}
          error={invalid ? 'Use letters, digits, ".", "-" or "_" (at most 64).' : null}
          onChange={(event) => setName(event.currentTarget.value)}
        />
        <ErrorAlert error={create.error} />
        <Button type="submit" loading={create.isPending} disabled={!NAME_PATTERN.test(name)}>
          Create key
        </Button>
      </Stack>
    </form>
  );
}

export function ApiKeysPage() {
  const keys = useApiKeys();
  const budgets = useKeyBudgets();
  const limits = useKeyLimits();
  const regenerate = useRegenerateApiKey();
  const remove = useDeleteApiKey();
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<DashboardIssuedApiKey | null>(null);
  const [failure, setFailure] = useState<unknown>(null);

  const confirmRegenerate = (name: string) =>
    modals.openConfirmModal({
      title: `Regenerate “${name}”?`,
      children: (
        <Text size="sm">
          The current key and the scoped tokens it signed stop working at once. Applications that
          use it need the new key.
        </Text>
      ),
      labels: { confirm: 'Regenerate', cancel: 'Cancel' },
      confirmProps: { color: 'orange' },
      onConfirm: () => regenerate.mutate(name, { onSuccess: setIssued, onError: setFailure }),
    });
  const confirmDelete = (name: string) =>
    modals.openConfirmModal({
      title: `Delete “${name}”?`,
      children: (
        <Text size="sm">
          Requests with this key, and with the scoped tokens it signed, are refused from now on.
          This cannot be undone.
        </Text>
      ),
      labels: { confirm: 'Delete key', cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: () => remove.mutate(name, { onError: setFailure }),
    });

  return (
    <>
      <PageTitle
        title="API keys"
        description="Full-access credentials for the API. Keep them secret."
        action={<Button onClick={() => setCreating(true)}>Create API key</Button>}
      />
      <Stack gap="md">
        {failure !== null && <ErrorAlert error={failure} />}
        <Paper withBorder radius="md">
          <QueryState query={keys}>
            {({ data }) =>
              data.length === 0 ? (
                <EmptyState title="No API keys yet">
                  Create a key to call the API with your prepaid balance.
                </EmptyState>
              ) : (
                <ListTable
                  headers={['Name', 'Budget', 'Rate limit', 'Created', 'Last used', '']}
                  minWidthPx={960}
                >
                  {data.map((key) => (
                    <Table.Tr key={key.name} data-testid={`key-${key.name}`}>
                      <Table.Td fw={600}>{key.name}</Table.Td>
                      <Table.Td>
                        <KeyBudget name={key.name} budgets={budgets} />
                      </Table.Td>
                      <Table.Td>
                        <KeyRateLimit name={key.name} limits={limits} />
                      </Table.Td>
                      <Table.Td>{formatDateTime(key.created_at)}</Table.Td>
                      <Table.Td>
                        {key.last_used_at === null ? 'Never' : formatDateTime(key.last_used_at)}
                      </Table.Td>
                      <Table.Td>
                        <Group gap="xs" justify="flex-end" wrap="nowrap">
                          <Button
                            size="xs"
                            variant="default"
                            onClick={() => confirmRegenerate(key.name)}
                          >
                            Regenerate
                          </Button>
                          <Button
                            size="xs"
                            variant="subtle"
                            color="red"
                            onClick={() => confirmDelete(key.name)}
                          >
                            Delete
                          </Button>
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </ListTable>
              )
            }
          </QueryState>
        </Paper>
      </Stack>
      <Modal opened={creating} onClose={() => setCreating(false)} title="Create an API key">
        <CreateKeyForm
          onIssued={(key) => {
            setCreating(false);
            setIssued(key);
          }}
        />
      </Modal>
      <SecretOnceModal
        title={issued === null ? '' : `API key “${issued.name}”`}
        label="API key"
        value={issued?.key ?? null}
        onClose={() => setIssued(null)}
      />
    </>
  );
}
