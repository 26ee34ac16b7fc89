import {
  Anchor,
  Badge,
  Button,
  Group,
  Paper,
  SegmentedControl,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import type { UsageGroup, UsageGroupBy, UsageLogEntry } from '../api/contract';
import {
  requestLogCsvHref,
  OWN_USAGE,
  useRequestLog,
  useUsage,
  type Range,
  type UsageScope,
} from '../api/owner-queries';
import { OwnBudgets } from '../components/BudgetBars';
import { DateRangeInputs, toRange, useDayRange } from '../components/DateRange';
import { ListTable } from '../components/ListTable';
import { LoadMore } from '../components/LoadMore';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, QueryState } from '../components/QueryState';
import { LazySpendBars } from '../components/SpendChart';
import { formatCount, formatDateTime, formatDay, formatDzd, formatMs } from '../format';
import { toDailyRows } from '../usage/daily-spend';

type View = Exclude<UsageGroupBy, 'day,model'>;

const GROUP_LABELS: Record<View, string> = {
  day: 'Day (UTC)',
  model: 'Model',
  key: 'Key or token',
};

function groupKey(group: UsageGroup, view: View): string {
  if (view === 'day') return formatDay(group.day ?? '');
  if (view === 'model') return group.model ?? '';
  return group.scoped_token_id
    ? `${group.key ?? '?'} · ${group.scoped_token_id}`
    : (group.key ?? '—');
}

/** Operators' groups are per account too: the row says whose. */
const groupName = (group: UsageGroup, view: View): string =>
  group.account_id === undefined
    ? groupKey(group, view)
    : `${group.account_id} · ${groupKey(group, view)}`;

interface Scoped {
  range: Range;
  scope: UsageScope;
}

function DailyChart({ range, scope }: Scoped) {
  const usage = useUsage(range, 'day,model', scope);
  return (
    <QueryState query={usage}>
      {({ data }) => (data.length === 0 ? null : <LazySpendBars rows={toDailyRows(data)} />)}
    </QueryState>
  );
}

function Summary({ range, scope }: Scoped) {
  const [view, setView] = useState<View>('day');
  const usage = useUsage(range, view, scope);
  return (
    <Paper withBorder radius="md" p="md">
      <Group justify="space-between" mb="sm">
        <Title order={4}>Totals</Title>
        <SegmentedControl
          size="xs"
          aria-label="Group by"
          value={view}
          onChange={(value) => setView(value as View)}
          data={[
            { value: 'day', label: 'Per day' },
            { value: 'model', label: 'Per model' },
            { value: 'key', label: 'Per key' },
          ]}
        />
      </Group>
      <DailyChart range={range} scope={scope} />
      <QueryState query={usage}>
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No usage in this period">
              Requests are counted when they end.
            </EmptyState>
          ) : (
            <ListTable
              headers={[
                GROUP_LABELS[view],
                'Requests',
                'Prompt tokens',
                'Completion tokens',
                'Cost',
              ]}
              minWidthPx={620}
            >
              {data.map((group, index) => (
                <Table.Tr key={index} data-testid="usage-group">
                  <Table.Td fw={600}>{groupName(group, view)}</Table.Td>
                  <Table.Td>{formatCount(group.requests)}</Table.Td>
                  <Table.Td>{formatCount(group.prompt_tokens)}</Table.Td>
                  <Table.Td>{formatCount(group.completion_tokens)}</Table.Td>
                  <Table.Td>{formatDzd(group.cost_dzd)}</Table.Td>
                </Table.Tr>
              ))}
            </ListTable>
          )
        }
      </QueryState>
    </Paper>
  );
}

const STATUS_COLORS: Record<string, string> = {
  succeeded: 'teal',
  failed: 'red',
  cancelled: 'gray',
  refused: 'orange',
};

const LOG_HEADERS = [
  'Time',
  'Endpoint',
  'Model',
  'Key or token',
  'Tokens in',
  'Tokens out',
  'Cost',
  'Status',
  'Latency',
];

function LogRow({ entry, withAccount }: { entry: UsageLogEntry; withAccount: boolean }) {
  const latency =
    entry.generation_latency_ms === null
      ? null
      : entry.generation_latency_ms + (entry.queue_latency_ms ?? 0);
  return (
    <Table.Tr data-testid="request-row">
      <Table.Td>{formatDateTime(entry.created_at)}</Table.Td>
      {withAccount && (
        <Table.Td ff="monospace" fz="xs">
          {entry.account_id}
        </Table.Td>
      )}
      <Table.Td>{entry.endpoint ?? '—'}</Table.Td>
      <Table.Td>{entry.model}</Table.Td>
      <Table.Td>
        {entry.key ?? '—'}
        {entry.scoped_token_id !== null && (
          <Text fz="xs" c="dimmed" ff="monospace">
            {entry.scoped_token_id}
          </Text>
        )}
      </Table.Td>
      <Table.Td>{formatCount(entry.prompt_tokens)}</Table.Td>
      <Table.Td>{formatCount(entry.completion_tokens)}</Table.Td>
      <Table.Td>
        {withAccount ? (
          formatDzd(entry.cost_dzd)
        ) : (
          // The owner's own requests link to their receipt.
          <Anchor
            component={Link}
            to={`/usage/requests/${encodeURIComponent(entry.job_id)}`}
            data-testid="receipt-link"
          >
            {formatDzd(entry.cost_dzd)}
          </Anchor>
        )}
        {entry.refunded_dzd > 0 && (
          <Text fz="xs" c="dimmed">
            refunded {formatDzd(entry.refunded_dzd)}
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Badge variant="light" color={STATUS_COLORS[entry.status] ?? 'gray'}>
          {entry.status}
        </Badge>
        {entry.stored && (
          // Responses API content kept for later turns: the account can read it back.
          <Badge variant="outline" color="grape" ml={4} data-testid="stored-badge">
            stored
          </Badge>
        )}
      </Table.Td>
      <Table.Td>{formatMs(latency)}</Table.Td>
    </Table.Tr>
  );
}

function RequestLog({ range, scope }: Scoped) {
  const log = useRequestLog(range, scope);
  const withAccount = scope.whose === 'operator';
  const headers = withAccount ? ['Time', 'Account', ...LOG_HEADERS.slice(1)] : LOG_HEADERS;
  return (
    <Paper withBorder radius="md" p="md">
      <Group justify="space-between" mb="sm">
        <div>
          <Title order={4}>Requests</Title>
          <Text size="xs" c="dimmed">
            Newest first. Never prompts or outputs.
          </Text>
        </div>
        <Button
          component="a"
          href={requestLogCsvHref(range, scope)}
          download
          variant="default"
          size="xs"
        >
          Download CSV
        </Button>
      </Group>
      <QueryState query={log}>
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No requests in this period" />
          ) : (
            <ListTable headers={headers} minWidthPx={withAccount ? 1120 : 980}>
              {rows.map((entry) => (
                <LogRow key={entry.job_id} entry={entry} withAccount={withAccount} />
              ))}
            </ListTable>
          )
        }
      </QueryState>
      <LoadMore query={log} />
    </Paper>
  );
}

/** Totals (with the daily chart) and the request log of `scope` over `range`. */
export function UsageSections({ range, scope }: Scoped) {
  return (
    <Stack gap="md">
      <Summary range={range} scope={scope} />
      <RequestLog range={range} scope={scope} />
    </Stack>
  );
}

export function UsagePage() {
  const [days, setDays] = useDayRange(30);
  const range = toRange(days);
  return (
    <>
      <PageTitle
        title="Usage"
        description="What your keys and tokens used, and every request."
        action={<DateRangeInputs value={days} onChange={setDays} />}
      />
      <OwnBudgets />
      <UsageSections range={range} scope={OWN_USAGE} />
    </>
  );
}
