import { Badge, Group, Paper, SimpleGrid, Stack, Text } from '@mantine/core';
import { useOverview } from '../api/queries';
import { PageTitle } from '../components/PageTitle';
import { QueryState } from '../components/QueryState';
import { SpendChart } from '../components/SpendChart';
import { formatDateTime, formatDzd } from '../format';

function Stat({ label, amount, hint }: { label: string; amount: number; hint: string }) {
  return (
    <Paper
      withBorder
      p="md"
      radius="md"
      data-testid={`stat-${label.toLowerCase().replace(/\s+/g, '-')}`}
    >
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        {label}
      </Text>
      <Text fz={24} fw={700} data-testid="amount">
        {formatDzd(amount)}
      </Text>
      <Text size="xs" c="dimmed">
        {hint}
      </Text>
    </Paper>
  );
}

export function OverviewPage() {
  const overview = useOverview();
  return (
    <>
      <PageTitle title="Overview" description="Your prepaid balance and what you spend." />
      <QueryState query={overview}>
        {(data) => (
          <Stack gap="md">
            {data.account.status === 'suspended' && (
              <Badge color="red" size="lg">
                Account suspended: API requests are refused
              </Badge>
            )}
            <SimpleGrid cols={{ base: 1, xs: 3 }} spacing="md">
              <Stat label="Balance" amount={data.balance_dzd} hint="Credited minus settled" />
              <Stat label="Reserved" amount={data.reserved_dzd} hint="Held by running requests" />
              <Stat
                label="Available"
                amount={data.available_dzd}
                hint="What new requests can use"
              />
            </SimpleGrid>
            <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="md">
              <Stat label="Spend today" amount={data.spend_today_dzd} hint="Since 00:00 UTC" />
              <Stat
                label="Spend this month"
                amount={data.spend_month_dzd}
                hint="Since the 1st, 00:00 UTC"
              />
            </SimpleGrid>
            <SpendChart />
            <Group justify="flex-end">
              <Text size="xs" c="dimmed">
                As of {formatDateTime(data.as_of)}
              </Text>
            </Group>
          </Stack>
        )}
      </QueryState>
    </>
  );
}
