import {
  Badge,
  Button,
  Modal,
  Paper,
  Select,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { modals } from '@mantine/modals';
import { useState, type FormEvent } from 'react';
import type { DashboardScopedToken, ScopedTokenState } from '../api/contract';
import {
  useCreateScopedToken,
  useRevokeScopedToken,
  useScopedTokens,
  type ScopedTokenInput,
} from '../api/owner-queries';
import { useApiKeys } from '../api/queries';
import { ListTable } from '../components/ListTable';
import { LoadMore } from '../components/LoadMore';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, ErrorAlert, QueryState } from '../components/QueryState';
import { SecretOnceModal } from '../components/SecretOnce';
import { formatDateTime, formatDzd } from '../format';

const STATE_COLORS: Record<ScopedTokenState, string> = {
  valid: 'teal',
  expired: 'gray',
  revoked: 'red',
  exhausted: 'orange',
};

const LIFETIMES = [
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
  { value: '31536000', label: '1 year' },
];

const LIMIT_PATTERN = /^[0-9]{1,10}(\.[0-9]{1,6})?$/;

function CreateTokenForm({ onIssued }: { onIssued: (token: string) => void }) {
  const keys = useApiKeys();
  const create = useCreateScopedToken();
  const [keyName, setKeyName] = useState<string | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const [lifetime, setLifetime] = useState<string | null>('86400');
  const [limit, setLimit] = useState('');
  const limitValid = limit === '' || (LIMIT_PATTERN.test(limit) && Number(limit) > 0);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (keyName === null || !limitValid) return;
    const body: ScopedTokenInput = { api_key_name: keyName };
    if (models.length > 0) body.models = models;
    if (lifetime !== null) body.expires_delta = Number(lifetime);
    if (limit !== '') body.spending_limit = Number(limit);
    create.mutate(body, { onSuccess: ({ token }) => onIssued(token) });
  };
  const names = keys.data?.data.map((key) => key.name) ?? [];
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="md">
        <Select
          label="Signed by API key"
          description="Deleting or regenerating this key ends the token too."
          data={names}
          value={keyName}
          onChange={setKeyName}
          placeholder={names.length === 0 ? 'Create an API key first' : 'Pick a key'}
          allowDeselect={false}
        />
        <TagsInput
          label="Models"
          description="Leave empty for any model. Press Enter after each."
          value={models}
          onChange={setModels}
          placeholder="e.g. acme/chat"
        />
        <Select
          label="Expires after"
          data={LIFETIMES}
          value={lifetime}
          onChange={setLifetime}
          allowDeselect={false}
        />
        <TextInput
          label="Spending limit (DZD)"
          description="Optional. Up to 6 decimals."
          inputMode="decimal"
          value={limit}
          error={limitValid ? null : 'A positive amount with up to 6 decimals'}
          onChange={(event) => setLimit(event.currentTarget.value.trim())}
        />
        <ErrorAlert error={create.error} />
        <Button type="submit" loading={create.isPending} disabled={keyName === null || !limitValid}>
          Create token
        </Button>
      </Stack>
    </form>
  );
}

const limitOf = (token: DashboardScopedToken) =>
  token.spending_limit_dzd === null ? 'No limit' : formatDzd(token.spending_limit_dzd);

function TokenRow({ token, onRevoke }: { token: DashboardScopedToken; onRevoke: () => void }) {
  return (
    <Table.Tr data-testid={`token-${token.id}`}>
      <Table.Td>
        <Text fz="xs" ff="monospace">
          {token.id}
        </Text>
        <Text fz="xs" c="dimmed">
          {token.origin === 'issued' ? 'Issued here' : 'Minted by a client'}
        </Text>
      </Table.Td>
      <Table.Td>{token.api_key_name}</Table.Td>
      <Table.Td>{token.models === null ? 'Any' : token.models.join(', ')}</Table.Td>
      <Table.Td>{formatDateTime(token.expires_at)}</Table.Td>
      <Table.Td>{limitOf(token)}</Table.Td>
      <Table.Td>{formatDzd(token.spent_dzd)}</Table.Td>
      <Table.Td>{token.remaining_dzd === null ? '—' : formatDzd(token.remaining_dzd)}</Table.Td>
      <Table.Td>
        <Badge color={STATE_COLORS[token.state]} variant="light" data-testid="token-state">
          {token.state}
        </Badge>
      </Table.Td>
      <Table.Td>
        {token.state !== 'revoked' && (
          <Button size="xs" variant="subtle" color="red" onClick={onRevoke}>
            Revoke
          </Button>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

const HEADERS = ['Token', 'Key', 'Models', 'Expires', 'Limit', 'Spent', 'Remaining', 'State', ''];

export function ScopedTokensPage() {
  const tokens = useScopedTokens();
  const revoke = useRevokeScopedToken();
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<string | null>(null);
  const confirmRevoke = (id: string) =>
    modals.openConfirmModal({
      title: 'Revoke this token?',
      children: (
        <Text size="sm">
          Requests with it are refused from the next one on (401 token_revoked). This cannot be
          undone.
        </Text>
      ),
      labels: { confirm: 'Revoke token', cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: () => revoke.mutate(id),
    });
  return (
    <>
      <PageTitle
        title="Scoped tokens"
        description="Limited credentials for third parties: models, expiry and a spending cap."
        action={<Button onClick={() => setCreating(true)}>Create token</Button>}
      />
      <Stack gap="md">
        <ErrorAlert error={revoke.error} />
        <Paper withBorder radius="md">
          <QueryState query={tokens}>
            {(rows) => {
              if (rows.length === 0) {
                return (
                  <EmptyState title="No scoped tokens yet">
                    Create one here or with POST /v1/scoped-jwt; tokens minted by your clients
                    appear once used.
                  </EmptyState>
                );
              }
              return (
                <ListTable headers={HEADERS} minWidthPx={980}>
                  {rows.map((token) => (
                    <TokenRow
                      key={token.id}
                      token={token}
                      onRevoke={() => confirmRevoke(token.id)}
                    />
                  ))}
                </ListTable>
              );
            }}
          </QueryState>
        </Paper>
        <LoadMore query={tokens} />
      </Stack>
      <Modal opened={creating} onClose={() => setCreating(false)} title="Create a scoped token">
        <CreateTokenForm
          onIssued={(token) => {
            setCreating(false);
            setIssued(token);
          }}
        />
      </Modal>
      <SecretOnceModal
        title="Scoped token"
        label="token"
        value={issued}
        onClose={() => setIssued(null)}
      />
    </>
  );
}
