import { Paper, Text } from '@mantine/core';
import { formatDzd } from '../format';

/** One amount in DZD with its label (test id `stat-<label>`, the amount `amount`). */
export function StatCard({
  label,
  amount,
  hint,
}: {
  label: string;
  amount: number;
  hint?: string;
}) {
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
      {hint !== undefined && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </Paper>
  );
}
