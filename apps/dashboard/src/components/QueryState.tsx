import { Alert, Button, Center, Loader, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { errorMessage } from '../api/messages';

interface QueryLike<T> {
  data: T | undefined;
  error: unknown;
  isPending: boolean;
  refetch: () => unknown;
}

/** The spinner while something loads: padded in the flow, or centred in a box of height `h`. */
export function Loading({ h }: { h?: number | string }) {
  return (
    <Center {...(h === undefined ? { py: 'xl' } : { h })}>
      <Loader aria-label="Loading" />
    </Center>
  );
}

/** Loading, error (with retry) or the data: every page shows the same three states. */
export function QueryState<T>({
  query,
  children,
}: {
  query: QueryLike<T>;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading />;
  if (query.data === undefined) {
    return (
      <Alert color="red" title="Could not load this page" role="alert">
        <Stack gap="xs" align="flex-start">
          <Text size="sm">{errorMessage(query.error)}</Text>
          <Button size="xs" variant="light" color="red" onClick={() => void query.refetch()}>
            Try again
          </Button>
        </Stack>
      </Alert>
    );
  }
  return <>{children(query.data)}</>;
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Stack align="center" gap={4} py="xl" data-testid="empty-state">
      <Text fw={600}>{title}</Text>
      {children !== undefined && (
        <Text size="sm" c="dimmed" ta="center" maw={420}>
          {children}
        </Text>
      )}
    </Stack>
  );
}

export function ErrorAlert({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <Alert color="red" role="alert">
      {errorMessage(error)}
    </Alert>
  );
}
