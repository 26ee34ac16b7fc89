import { Code, Paper, Table, Text, Title } from '@mantine/core';
import { ACCOUNT_TOKENS_SHOWN, useAccountScopedTokens } from '../api/operator-queries';
import { formatDateTime, formatDzd } from '../format';
import { ListTable } from './ListTable';
import { EmptyState, QueryState } from './QueryState';

/**
 * An account's newest scoped tokens on its detail page (operators and finance): each token's id
 * is what its budget and rate limit are set by ("Scoped token" in their dialogs).
 */
export function AccountScopedTokens({ accountId }: { accountId: string }) {
  const tokens = useAccountScopedTokens(accountId);
  return (
    <Paper withBorder p="md" radius="md">
      <Title order={4}>Scoped tokens</Title>
      <Text size="xs" c="dimmed" mb="sm">
        The newest {ACCOUNT_TOKENS_SHOWN}; a token&apos;s id sets its budget or rate limit.
      </Text>
      <QueryState query={tokens}>
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No scoped tokens" />
          ) : (
            <ListTable headers={['Token id', 'Key', 'State', 'Spent', 'Expires']} minWidthPx={640}>
              {data.map((token) => (
                <Table.Tr key={token.id} data-testid={`scoped-token-${token.id}`}>
                  <Table.Td>
                    <Code>{token.id}</Code>
                  </Table.Td>
                  <Table.Td>{token.api_key_name}</Table.Td>
                  <Table.Td>{token.state}</Table.Td>
                  <Table.Td>{formatDzd(token.spent_dzd)}</Table.Td>
                  <Table.Td>{formatDateTime(token.expires_at)}</Table.Td>
                </Table.Tr>
              ))}
            </ListTable>
          )
        }
      </QueryState>
    </Paper>
  );
}
