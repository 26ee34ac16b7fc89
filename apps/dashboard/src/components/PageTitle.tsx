import { Group, Text, Title, type MantineSpacing } from '@mantine/core';
import type { ReactNode } from 'react';

export function PageTitle({
  title,
  description,
  action,
  mb = 'lg',
}: {
  title: string;
  description?: string;
  action?: ReactNode;
  mb?: MantineSpacing | 0;
}) {
  return (
    <Group justify="space-between" align="flex-end" mb={mb} gap="sm">
      <div>
        <Title order={2}>{title}</Title>
        {description !== undefined && (
          <Text c="dimmed" size="sm">
            {description}
          </Text>
        )}
      </div>
      {action}
    </Group>
  );
}
