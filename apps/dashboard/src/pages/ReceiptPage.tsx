import { Anchor, Badge, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import type { Receipt } from '../api/contract';
import { useReceipt } from '../api/owner-queries';
import { PageTitle } from '../components/PageTitle';
import { QueryState } from '../components/QueryState';
import { StatCard } from '../components/StatCard';
import { formatCount, formatDateTime, formatDzd, formatMs } from '../format';

/** Label–value lines of one part of the receipt. */
function Facts({ title, rows }: { title: string; rows: [string, ReactNode][] }) {
  return (
    <Paper withBorder radius="md" p="md">
      <Title order={4} mb="xs">
        {title}
      </Title>
      <Table>
        <Table.Tbody>
          {rows.map(([label, value]) => (
            <Table.Tr key={label}>
              <Table.Th w="40%">{label}</Table.Th>
              <Table.Td>{value}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Paper>
  );
}

const ids = (values: string[]) => (values.length === 0 ? '—' : values.join(', '));
const mono = (value: string | null) => (
  <Text ff="monospace" fz="xs">
    {value ?? '—'}
  </Text>
);
const when = (iso: string | null) => (iso === null ? '—' : formatDateTime(iso));

function ReceiptView({ receipt }: { receipt: Receipt }) {
  const prices = receipt.price_per_million;
  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
        <StatCard label="Net cost" amount={receipt.net_dzd} hint="Settled, less refunds" />
        <StatCard
          label="Settled"
          amount={receipt.settled_dzd ?? 0}
          {...(receipt.settled_dzd === null ? { hint: 'Still running' } : {})}
        />
        <StatCard label="Refunded" amount={receipt.refunded_dzd} />
        <StatCard label="Held" amount={receipt.hold_dzd} hint="The worst case, at admission" />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Facts
          title="Request"
          rows={[
            ['Status', <Badge variant="light">{receipt.status}</Badge>],
            ['Model', receipt.model],
            ['Endpoint', receipt.endpoint ?? '—'],
            ['Key', receipt.key ?? '—'],
            ['Scoped token', mono(receipt.scoped_token_id)],
            ['Priority', receipt.priority ? 'yes' : 'no'],
            ['Request id', mono(receipt.request_id)],
            ['Job id (hold)', mono(receipt.job_id)],
          ]}
        />
        <Facts
          title="Tokens and prices"
          rows={[
            ['Prompt tokens', formatCount(receipt.tokens.prompt)],
            ['Completion tokens', formatCount(receipt.tokens.completion)],
            ['Reasoning tokens', formatCount(receipt.tokens.reasoning)],
            ['Input, per 1M tokens', prices === null ? '—' : formatDzd(prices.input_dzd)],
            ['Output, per 1M tokens', prices === null ? '—' : formatDzd(prices.output_dzd)],
          ]}
        />
        <Facts
          title="Ledger"
          rows={[
            ['Settlement transaction', mono(receipt.ledger.settlement_transaction_id)],
            ['Settlement entries', ids(receipt.ledger.settlement_entry_ids)],
            ['Refund transaction', mono(receipt.ledger.refund_transaction_id)],
            ['Refund entries', ids(receipt.ledger.refund_entry_ids)],
          ]}
        />
        <Facts
          title="Timings"
          rows={[
            ['Admitted', when(receipt.timings.created_at)],
            ['Ended', when(receipt.timings.ended_at)],
            ['Refunded', when(receipt.timings.refunded_at)],
            ['Queue latency', formatMs(receipt.timings.queue_latency_ms)],
            ['Generation latency', formatMs(receipt.timings.generation_latency_ms)],
          ]}
        />
      </SimpleGrid>
    </Stack>
  );
}

/** `/usage/requests/:requestId`: one request of the log, traced to its money. */
export function ReceiptPage() {
  const { requestId = '' } = useParams();
  const receipt = useReceipt(requestId);
  return (
    <>
      <PageTitle
        title="Receipt"
        description="One request: tokens, prices, hold, settlement, refund and ledger entries."
        action={
          <Anchor component={Link} to="/usage" size="sm">
            Back to usage
          </Anchor>
        }
      />
      <QueryState query={receipt}>{(data) => <ReceiptView receipt={data} />}</QueryState>
    </>
  );
}
