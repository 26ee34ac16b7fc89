import { Anchor, Badge, Paper, Stack, Table, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { Link } from 'react-router';
import { useAccounts } from '../api/queries';
import { canEdit, useSession } from '../api/session';
import { ListTable } from '../components/ListTable';
import { LoadMore } from '../components/LoadMore';
import { NewAccount } from '../components/NewAccount';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, QueryState } from '../components/QueryState';
import { formatDateTime } from '../format';

export function AccountsPage() {
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const accounts = useAccounts(q);
  const canWrite = canEdit(useSession().data);
  return (
    <>
      <PageTitle
        title="Accounts"
        description="Every customer account of the gateway."
        action={canWrite ? <NewAccount /> : undefined}
      />
      <Stack gap="md">
        <TextInput
          placeholder="Search by name or exact id"
          aria-label="Search accounts"
          value={search}
          onChange={(event) => setSearch(event.currentTarget.value)}
          maw={420}
        />
        <Paper withBorder radius="md">
          <QueryState query={accounts}>
            {(rows) => {
              if (rows.length === 0) {
                return (
                  <EmptyState title="No accounts found">
                    {q === ''
                      ? 'Create one with “New account”, gatewayctl or the operator API.'
                      : `Nothing matches “${q}”.`}
                  </EmptyState>
                );
              }
              return (
                <ListTable
                  headers={['Name', 'Id', 'Status', 'Rate limit', 'Created']}
                  minWidthPx={640}
                >
                  {rows.map((account) => (
                    <Table.Tr key={account.id}>
                      <Table.Td>
                        <Anchor
                          fz="sm"
                          fw={600}
                          component={Link}
                          to={`/operator/accounts/${encodeURIComponent(account.id)}`}
                        >
                          {account.name}
                        </Anchor>
                      </Table.Td>
                      <Table.Td ff="monospace" fz="xs">
                        {account.id}
                      </Table.Td>
                      <Table.Td>
                        <Badge color={account.status === 'active' ? 'teal' : 'red'} variant="light">
                          {account.status}
                        </Badge>
                      </Table.Td>
                      <Table.Td>{account.rate_limit_per_minute} / min</Table.Td>
                      <Table.Td>{formatDateTime(account.created_at)}</Table.Td>
                    </Table.Tr>
                  ))}
                </ListTable>
              );
            }}
          </QueryState>
        </Paper>
        <LoadMore query={accounts} />
      </Stack>
    </>
  );
}
