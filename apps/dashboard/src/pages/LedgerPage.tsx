import {
  Alert,
  Anchor,
  Badge,
  Group,
  List,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { Link } from 'react-router';
import { useLedgerCheck, useLedgerEntries } from '../api/operator-queries';
import { ListTable } from '../components/ListTable';
import { LoadMore } from '../components/LoadMore';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, QueryState } from '../components/QueryState';
import { formatDateTime, formatMicroDzd } from '../format';

function InvariantCheck() {
  const check = useLedgerCheck();
  return (
    <Paper withBorder radius="md" p="md" data-testid="ledger-check">
      <Group justify="space-between" mb="xs">
        <Title order={4}>Invariant check</Title>
        {check.data !== undefined && (
          <Badge color={check.data.ok ? 'teal' : 'red'} size="lg">
            {check.data.ok ? 'All invariants hold' : `${check.data.violations.length} violations`}
          </Badge>
        )}
      </Group>
      <QueryState query={check}>
        {(report) =>
          report.ok ? (
            <Text size="sm" c="dimmed">
              Every transaction balances, balances match their entries and usage records match the
              settlements. Checked {formatDateTime(new Date(check.dataUpdatedAt).toISOString())}.
            </Text>
          ) : (
            <Alert color="red" title="Violations">
              <List size="sm">
                {report.violations.map((violation) => (
                  <List.Item key={violation}>{violation}</List.Item>
                ))}
              </List>
            </Alert>
          )
        }
      </QueryState>
    </Paper>
  );
}

function Entries() {
  const [search, setSearch] = useState('');
  const [account] = useDebouncedValue(search.trim(), 300);
  const entries = useLedgerEntries(account);
  return (
    <Paper withBorder radius="md" p="md">
      <Group justify="space-between" mb="sm" align="flex-end">
        <Title order={4}>Entries</Title>
        <TextInput
          aria-label="Filter by account id"
          placeholder="Account id"
          value={search}
          onChange={(event) => setSearch(event.currentTarget.value)}
        />
      </Group>
      <QueryState query={entries}>
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No entries" />
          ) : (
            <ListTable
              headers={['Time', 'Account', 'Kind', 'Reference', 'Amount']}
              minWidthPx={760}
            >
              {rows.map((entry) => (
                <Table.Tr key={entry.id} data-testid="ledger-entry">
                  <Table.Td>{formatDateTime(entry.created_at)}</Table.Td>
                  <Table.Td fz="xs" ff="monospace">
                    {entry.account_id === null ? (
                      'platform'
                    ) : (
                      <Anchor
                        component={Link}
                        fz="xs"
                        to={`/operator/accounts/${encodeURIComponent(entry.account_id)}`}
                      >
                        {entry.account_id}
                      </Anchor>
                    )}
                  </Table.Td>
                  <Table.Td>{entry.kind}</Table.Td>
                  <Table.Td fz="xs">{entry.reference ?? '—'}</Table.Td>
                  <Table.Td>{formatMicroDzd(entry.amount_micro_dzd)}</Table.Td>
                </Table.Tr>
              ))}
            </ListTable>
          )
        }
      </QueryState>
      <LoadMore query={entries} />
    </Paper>
  );
}

export function LedgerPage() {
  return (
    <>
      <PageTitle title="Ledger" description="The double-entry ledger and its invariant check." />
      <Stack gap="md">
        <InvariantCheck />
        <Entries />
      </Stack>
    </>
  );
}
