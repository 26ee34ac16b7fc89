import {
  Alert,
  Badge,
  Button,
  Group,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { lazy, Suspense, useState } from 'react';
import type { ClosedPeriod, PeriodReport } from '../api/contract';
import { previousMonthIn } from '@gateway/contracts/report-months';
import {
  reportCsvHref,
  useClosedPeriods,
  useClosePeriod,
  usePeriodReport,
} from '../api/finance-queries';
import { useSession } from '../api/session';
import { ListTable } from '../components/ListTable';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, Loading, QueryState } from '../components/QueryState';
import { formatDateTime, formatMicroDzd } from '../format';

// Recharts is the largest library here: loaded only when there is something to draw.
const RevenueBars = lazy(() => import('../components/RevenueBars'));

const CHECK_LABELS: Record<keyof PeriodReport['checks'], string> = {
  trial_balance_sums_to_zero: 'trial balance sums to zero',
  roll_forward_holds: 'liability roll-forward',
  liability_equals_customers_line: 'liability equals the customers line',
  revenue_equals_revenue_account: 'revenue equals the revenue account',
};

function Checks({ report }: { report: PeriodReport }) {
  const failed = (Object.keys(CHECK_LABELS) as (keyof PeriodReport['checks'])[]).filter(
    (name) => !report.checks[name],
  );
  if (failed.length === 0) {
    return (
      <Badge color="teal" size="lg" data-testid="report-checks">
        Every identity holds
      </Badge>
    );
  }
  return (
    <Alert color="red" title="Identities that do not hold" data-testid="report-checks">
      {failed.map((name) => CHECK_LABELS[name]).join(', ')}
    </Alert>
  );
}

const ROLL_FORWARD_HEADERS = [
  'Account',
  'Opening',
  'Credits',
  'Usage',
  'Refunds',
  'Adjustments',
  'Closing',
  'Difference',
];

type RollForward = PeriodReport['customer_liability']['total'];

function rollForwardCells(line: RollForward) {
  return [
    line.opening_micro_dzd,
    line.credits_micro_dzd,
    line.usage_micro_dzd,
    line.refunds_micro_dzd,
    line.adjustments_micro_dzd,
    line.closing_micro_dzd,
    line.difference_micro_dzd,
  ].map((micro, index) => <Table.Td key={index}>{formatMicroDzd(micro)}</Table.Td>);
}

function Liability({ report }: { report: PeriodReport }) {
  const { total, accounts } = report.customer_liability;
  return (
    <Paper withBorder radius="md" p="md">
      <Title order={4} mb="xs">
        Customers’ prepaid liability
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        Opening + credits − usage + refunds + adjustments = closing, per account and in total.
      </Text>
      <ListTable headers={ROLL_FORWARD_HEADERS} minWidthPx={900}>
        {accounts.map((line) => (
          <Table.Tr key={line.account_id} data-testid="rollforward-row">
            <Table.Td>
              {line.name}
              <Text fz="xs" c="dimmed" ff="monospace">
                {line.account_id} {line.status === 'suspended' ? '· suspended' : ''}
              </Text>
            </Table.Td>
            {rollForwardCells(line)}
          </Table.Tr>
        ))}
        <Table.Tr data-testid="rollforward-total" fw={700}>
          <Table.Td>Total</Table.Td>
          {rollForwardCells(total)}
        </Table.Tr>
      </ListTable>
      {report.customer_liability.next_cursor !== null && (
        <Text size="sm" c="dimmed" mt="xs">
          The first {accounts.length} accounts; the CSV has every one.
        </Text>
      )}
    </Paper>
  );
}

function Revenue({ report }: { report: PeriodReport }) {
  const { by_day: days, by_model: models, total } = report.revenue;
  return (
    <Paper withBorder radius="md" p="md" data-testid="revenue">
      <Group justify="space-between" mb="sm">
        <Title order={4}>Revenue</Title>
        <Text fw={600}>Net {formatMicroDzd(total.net_micro_dzd)}</Text>
      </Group>
      {days.length === 0 ? (
        <EmptyState title="No revenue in this period" />
      ) : (
        <Stack gap="md">
          <Suspense fallback={<Loading h={240} />}>
            <RevenueBars days={days} />
          </Suspense>
          <ListTable headers={['Model', 'Charged', 'Refunded', 'Net']} minWidthPx={520}>
            {models.map((line) => (
              <Table.Tr key={line.model} data-testid="revenue-model-row">
                <Table.Td>{line.model}</Table.Td>
                <Table.Td>{formatMicroDzd(line.charged_micro_dzd)}</Table.Td>
                <Table.Td>{formatMicroDzd(line.refunded_micro_dzd)}</Table.Td>
                <Table.Td>{formatMicroDzd(line.net_micro_dzd)}</Table.Td>
              </Table.Tr>
            ))}
          </ListTable>
        </Stack>
      )}
      <Text size="sm" c="dimmed" mt="sm">
        Held by {report.open_holds.count} requests still open at the end:{' '}
        {formatMicroDzd(report.open_holds.reserved_micro_dzd)} (reserved, not revenue).
      </Text>
    </Paper>
  );
}

function Downloads({ month }: { month: string }) {
  const link = (section: string, label: string) => (
    <Button component="a" href={reportCsvHref(month, section)} download variant="default" size="xs">
      {label}
    </Button>
  );
  return (
    <Group gap="xs">
      {link('roll_forward', 'Roll-forward CSV')}
      {link('revenue', 'Revenue CSV')}
      {link('trial_balance', 'Trial balance CSV')}
    </Group>
  );
}

function Closing({ month, report }: { month: string; report: PeriodReport }) {
  const session = useSession();
  const periods = useClosedPeriods();
  const close = useClosePeriod();
  // When the page opened: a month that ends while it is open needs a reload to be closed.
  const [openedAtMs] = useState(() => Date.now());
  const closed = periods.data?.data.find((period: ClosedPeriod) => period.period === month);
  if (closed) {
    return (
      <Badge color="gray" size="lg" data-testid="period-closed">
        Closed by {closed.closed_by} on {formatDateTime(closed.closed_at)}
      </Badge>
    );
  }
  const ended = new Date(report.period.ends_at).getTime() <= openedAtMs;
  if (session.data?.user.role !== 'finance') {
    return (
      <Text size="sm" c="dimmed">
        Open. The finance role closes a period once it has ended.
      </Text>
    );
  }
  return (
    <Stack gap={4} align="flex-end">
      <Button
        color="dark"
        disabled={!ended}
        loading={close.isPending}
        onClick={() => close.mutate(month)}
      >
        Close {month}
      </Button>
      {!ended && (
        <Text size="xs" c="dimmed">
          The month has not ended yet.
        </Text>
      )}
      {close.error && (
        <Text size="xs" c="red">
          {close.error.message}
        </Text>
      )}
    </Stack>
  );
}

/**
 * Finance's month-end close: the period report, its downloads, and closing the month. It opens
 * on the month finance closes next: the one before today's in the business's zone (billing's
 * `REPORT_TIME_ZONE`, which the list of closed months names), not in UTC or the browser's zone.
 */
export function FinancePage() {
  const periods = useClosedPeriods();
  return (
    <QueryState query={periods}>
      {(list) => <FinanceReport timeZone={list.time_zone ?? 'UTC'} />}
    </QueryState>
  );
}

function FinanceReport({ timeZone }: { timeZone: string }) {
  const [month, setMonth] = useState(() => previousMonthIn(timeZone, new Date()));
  const report = usePeriodReport(month);
  return (
    <>
      <PageTitle
        title="Finance"
        description="The month-end close from the ledger: liability roll-forward, revenue, checks."
        action={
          <TextInput
            type="month"
            aria-label="Month"
            value={month}
            onChange={(event) => {
              const value = event.currentTarget.value;
              if (/^\d{4}-\d{2}$/.test(value)) setMonth(value);
            }}
          />
        }
      />
      <QueryState query={report}>
        {(data) => (
          <Stack gap="md">
            <Group justify="space-between" align="flex-start">
              <Stack gap={6}>
                <Checks report={data} />
                <Text size="sm" c="dimmed">
                  {data.period.from} to {data.period.to} ({data.period.time_zone})
                </Text>
                <Downloads month={month} />
              </Stack>
              <Closing month={month} report={data} />
            </Group>
            <Liability report={data} />
            <Revenue report={data} />
          </Stack>
        )}
      </QueryState>
    </>
  );
}
