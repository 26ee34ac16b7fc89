import { Badge, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import type { DashboardOverview } from '../api/contract';
import { useOverview } from '../api/queries';
import { PageTitle } from '../components/PageTitle';
import { QueryState } from '../components/QueryState';
import { SpendChart } from '../components/SpendChart';
import { StatCard } from '../components/StatCard';
import { formatDateTime } from '../format';

type AmountField = {
  [K in keyof DashboardOverview]: DashboardOverview[K] extends number ? K : never;
}[keyof DashboardOverview];

// The money first (what is there, what is held, what is free), then what was spent.
const ROWS: { label: string; field: AmountField; hint: string }[][] = [
  [
    { label: 'Balance', field: 'balance_dzd', hint: 'Credited minus settled' },
    { label: 'Reserved', field: 'reserved_dzd', hint: 'Held by running requests' },
    { label: 'Available', field: 'available_dzd', hint: 'What new requests can use' },
  ],
  [
    { label: 'Spend today', field: 'spend_today_dzd', hint: 'Since 00:00 UTC' },
    { label: 'Spend this month', field: 'spend_month_dzd', hint: 'Since the 1st, 00:00 UTC' },
  ],
];

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
            {ROWS.map((row, index) => (
              <SimpleGrid key={index} cols={{ base: 1, xs: row.length }} spacing="md">
                {row.map(({ label, field, hint }) => (
                  <StatCard key={field} label={label} amount={data[field]} hint={hint} />
                ))}
              </SimpleGrid>
            ))}
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
