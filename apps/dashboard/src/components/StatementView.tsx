import { Button, Group, Paper, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import type { Statement } from '../api/contract';
import { statementCsvHref, useStatement, type StatementAccount } from '../api/owner-queries';
import { formatDateTime, formatMicroDzd } from '../format';
import { DateRangeInputs, toRange, useDayRange } from './DateRange';
import { ListTable } from './ListTable';
import { EmptyState, QueryState } from './QueryState';

const KIND_LABELS: Record<string, string> = {
  credit: 'Credit',
  hold_settlement: 'Settlement',
  refund: 'Refund',
};

function Totals({ statement }: { statement: Statement }) {
  const items = [
    ['Opening balance', statement.opening_balance_micro_dzd],
    ['Credits', statement.total_credits_micro_dzd],
    ['Debits', statement.total_debits_micro_dzd],
    ['Closing balance', statement.closing_balance_micro_dzd],
  ] as const;
  return (
    <SimpleGrid cols={{ base: 2, sm: 4 }}>
      {items.map(([label, micro]) => (
        <Paper key={label} withBorder p="sm" radius="md" data-testid={`total-${label}`}>
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            {label}
          </Text>
          <Text fw={700}>{formatMicroDzd(micro)}</Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}

/**
 * An account's statement over whole days of the viewer's zone: totals, each credit and
 * settlement with the running balance, and the CSV download (`account`: null for the owner's
 * own, else the account an operator looks at).
 */
export function StatementView({ account }: { account: StatementAccount }) {
  const [days, setDays] = useDayRange(30);
  const range = toRange(days);
  const statement = useStatement(account, range);
  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end">
        <DateRangeInputs value={days} onChange={setDays} />
        <Button component="a" href={statementCsvHref(account, range)} download variant="default">
          Download CSV
        </Button>
      </Group>
      <QueryState query={statement}>
        {(data) => (
          <Stack gap="md">
            <Totals statement={data} />
            <Paper withBorder radius="md">
              {data.lines.length === 0 ? (
                <EmptyState title="Nothing in this period">
                  Credits and settled requests appear here with the running balance.
                </EmptyState>
              ) : (
                <ListTable
                  headers={['Time', 'Kind', 'Reference', 'Amount', 'Balance']}
                  minWidthPx={720}
                >
                  {data.lines.map((line) => (
                    <Table.Tr key={line.entry_id} data-testid="statement-line">
                      <Table.Td>{formatDateTime(line.created_at)}</Table.Td>
                      <Table.Td>{KIND_LABELS[line.kind] ?? line.kind}</Table.Td>
                      <Table.Td fz="xs" ff="monospace">
                        {line.reference ?? line.hold_id ?? '—'}
                      </Table.Td>
                      <Table.Td c={line.amount_micro_dzd.startsWith('-') ? undefined : 'teal'}>
                        {formatMicroDzd(line.amount_micro_dzd)}
                      </Table.Td>
                      <Table.Td>{formatMicroDzd(line.balance_after_micro_dzd)}</Table.Td>
                    </Table.Tr>
                  ))}
                </ListTable>
              )}
            </Paper>
          </Stack>
        )}
      </QueryState>
    </Stack>
  );
}
